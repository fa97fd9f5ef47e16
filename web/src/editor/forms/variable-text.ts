import type { VariableType, VariableValue } from '../api'

// A variable's value as typed in a text box: its default in the variables panel, a starting value
// in the test panel, a sample value for an HTTP request's "Try it".

/** A value as typed in a text box: '' is none; otherwise it must parse as the type. */
export function parseDefault(type: VariableType, text: string): { ok: true; value: VariableValue | null } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: null }
  switch (type) {
    case 'string':
      return { ok: true, value: text }
    case 'number': {
      const n = Number(text)
      return Number.isFinite(n) ? { ok: true, value: n } : { ok: false }
    }
    case 'boolean':
      return text === 'true' || text === 'false' ? { ok: true, value: text === 'true' } : { ok: false }
    case 'object':
      try {
        const parsed: unknown = JSON.parse(text)
        return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ok: true, value: parsed as Record<string, unknown> } : { ok: false }
      } catch {
        return { ok: false }
      }
  }
}

export const showDefault = (value: VariableValue | null) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value))
