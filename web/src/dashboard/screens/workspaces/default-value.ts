import type { Variable, VariableType } from './api-types'

/**
 * A default value as typed in the form, for the variable's type. What cannot be read as that type
 * goes to the API as typed, so its own message says what is wrong.
 */
export function parseDefaultValue(type: VariableType, text: string): Variable['defaultValue'] {
  if (text.trim() === '') return null
  if (type === 'number') return Number.isFinite(Number(text)) ? Number(text) : text
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text
  if (type === 'object') {
    try {
      const parsed: unknown = JSON.parse(text)
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : text
    } catch {
      return text
    }
  }
  return text
}

/** A stored default value as the form shows it. */
export function formatDefaultValue(value: Variable['defaultValue']): string {
  if (value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}
