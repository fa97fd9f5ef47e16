import { useState } from 'react'
import { interpolator } from '../../../../src/domain/interpolate.js'
import type { VariableType, VariableValue } from '../api'
import { useT } from '../i18n'
import { useWorkspace } from '../workspace'
import { Field } from './fields'
import { parseDefault, showDefault } from './variable-text'

// Sample values of the variables a node's templates read, typed for its "Try it" (an HTTP request,
// an AI step): each starts as the variable's default and must parse as its type.

/** The variables the templates in `values` read, by name (`{{customer.id}}` reads customer); secrets are no variables. */
export function variablesRead(...values: unknown[]): string[] {
  const reader = interpolator({ system: {}, variables: {} }, { secret: () => '' })
  const read = (value: unknown): void => {
    if (typeof value === 'string') reader.text(value)
    else if (Array.isArray(value)) value.forEach(read)
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(read)
  }
  values.forEach(read)
  return [...new Set([...reader.unknown].map((path) => path.split('.')[0]!))]
}

interface Sample {
  name: string
  type: VariableType
  text: string
  parsed: ReturnType<typeof parseDefault>
}

export interface Samples {
  list: Sample[]
  /** Every sample parses as its variable's type. */
  ready: boolean
  /** The values given, by name; an empty one is left out. */
  values(): Record<string, VariableValue>
  set(name: string, text: string): void
}

/** The samples of the variables `names`, as typed so far. */
export function useSamples(names: readonly string[]): Samples {
  const { variables } = useWorkspace()
  const [texts, setTexts] = useState<Record<string, string>>({})
  const list = names.map((name) => {
    const variable = variables.find((v) => v.name === name)
    const type: VariableType = variable?.type ?? 'string'
    const text = texts[name] ?? showDefault(variable?.defaultValue ?? null)
    return { name, type, text, parsed: parseDefault(type, text) }
  })
  return {
    list,
    ready: list.every((sample) => sample.parsed.ok),
    values: () => Object.fromEntries(list.flatMap(({ name, parsed }) => (parsed.ok && parsed.value !== null ? [[name, parsed.value]] : []))),
    set: (name, text) => setTexts((typed) => ({ ...typed, [name]: text })),
  }
}

/** A field for each sample, typed as its variable; nothing when the templates read no variable. */
export function SampleValues({ samples }: { samples: Samples }) {
  const t = useT()
  if (samples.list.length === 0) return null
  return (
    <div className="http-try-samples" role="group" aria-label={t('try.samples')}>
      {samples.list.map(({ name, type, text, parsed }) => {
        const set = (value: string) => samples.set(name, value)
        return (
          <Field key={name} label={t('try.sample', { name: `${name} · ${t(`vtype.${type}`)}` })} error={parsed.ok ? undefined : t('try.badSample', { type: t(`vtype.${type}`) })}>
            {type === 'boolean' ? (
              <select value={text} onChange={(e) => set(e.target.value)}>
                <option value="">{t('test.unset')}</option>
                <option value="true">{t('test.yes')}</option>
                <option value="false">{t('test.no')}</option>
              </select>
            ) : type === 'object' ? (
              <textarea rows={3} className="code" spellCheck={false} value={text} onChange={(e) => set(e.target.value)} />
            ) : (
              <input type={type === 'number' ? 'number' : 'text'} value={text} onChange={(e) => set(e.target.value)} />
            )}
          </Field>
        )
      })}
    </div>
  )
}
