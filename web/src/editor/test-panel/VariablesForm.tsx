import type { FormEvent } from 'react'
import type { Variable, VariableValue } from '../api'
import { useT } from '../i18n'
import { Field } from '../forms/fields'
import { parseDefault, showDefault } from '../forms/variable-text'

/** The form's text of each workspace variable, by name. */
export type VariableTexts = Record<string, string>

/** Each variable's default value, as the form shows it. */
export const defaultTexts = (variables: Variable[]): VariableTexts => Object.fromEntries(variables.map((v) => [v.name, showDefault(v.defaultValue)]))

/** The values a preview starts with (empty ones left out), or undefined while one does not parse as its type. */
export function startingValues(variables: Variable[], texts: VariableTexts): Record<string, VariableValue> | undefined {
  const values: Record<string, VariableValue> = {}
  for (const variable of variables) {
    const parsed = parseDefault(variable.type, texts[variable.name] ?? '')
    if (!parsed.ok) return undefined
    if (parsed.value !== null) values[variable.name] = parsed.value
  }
  return values
}

export interface VariablesFormProps {
  variables: Variable[]
  texts: VariableTexts
  onChange(texts: VariableTexts): void
  onStart(): void
  starting: boolean
}

/** The workspace's variables, each with an input of its type, and the button that starts the preview. */
export function VariablesForm({ variables, texts, onChange, onStart, starting }: VariablesFormProps) {
  const t = useT()
  const valid = startingValues(variables, texts) !== undefined
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (valid) onStart()
  }
  return (
    <form className="test-variables" onSubmit={submit} data-testid="test-variables">
      <h3>{t('test.variables')}</h3>
      <p className="hint">{variables.length ? t('test.variablesHint') : t('test.noVariables')}</p>
      {variables.map((variable) => {
        const text = texts[variable.name] ?? ''
        const set = (value: string) => onChange({ ...texts, [variable.name]: value })
        const label = `${variable.name} · ${t(`vtype.${variable.type}`)}`
        const error = parseDefault(variable.type, text).ok ? undefined : t('test.badValue')
        return (
          <Field key={variable.id} label={label} hint={variable.description ?? undefined} error={error}>
            {variable.type === 'boolean' ? (
              <select value={text} onChange={(e) => set(e.target.value)}>
                <option value="">{t('test.unset')}</option>
                <option value="true">{t('test.yes')}</option>
                <option value="false">{t('test.no')}</option>
              </select>
            ) : variable.type === 'object' ? (
              <textarea rows={3} className="mono" value={text} onChange={(e) => set(e.target.value)} spellCheck={false} />
            ) : (
              <input type={variable.type === 'number' ? 'number' : 'text'} value={text} onChange={(e) => set(e.target.value)} />
            )}
          </Field>
        )
      })}
      <button type="submit" className="primary" disabled={!valid || starting} data-testid="test-start">
        {starting ? t('test.starting') : t('test.start')}
      </button>
    </form>
  )
}
