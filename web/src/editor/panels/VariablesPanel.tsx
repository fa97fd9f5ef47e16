import { useState } from 'react'
import { errorText } from '../../shared/api-problems'
import type { Variable, VariableType } from '../api'
import { useT } from '../i18n'
import { Field, Select, TextInput } from '../forms/fields'
import { parseDefault, showDefault } from '../forms/variable-text'
import { useWorkspace } from '../workspace'

const TYPES: VariableType[] = ['string', 'number', 'boolean', 'object']
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Lists, creates and edits the workspace's variables (name and type are fixed once created). */
export function VariablesPanel() {
  const t = useT()
  const { variables } = useWorkspace()
  const [editing, setEditing] = useState<string>()
  return (
    <div className="variables-panel" data-testid="variables-panel">
      <h2>{t('var.title')}</h2>
      <p className="hint">{t('var.hint')}</p>
      {variables.length === 0 && <p className="muted">{t('var.empty')}</p>}
      <ul className="variable-list">
        {variables.map((v) =>
          editing === v.id ? (
            <li key={v.id}>
              <VariableEditor variable={v} onDone={() => setEditing(undefined)} />
            </li>
          ) : (
            <li key={v.id}>
              <div className="variable-line">
                <code>{v.name}</code> <span className="badge">{t(`vtype.${v.type}`)}</span>
                <button type="button" className="link" onClick={() => setEditing(v.id)}>
                  {t('var.edit')}
                </button>
              </div>
              {v.description && <p className="muted">{v.description}</p>}
              {v.defaultValue !== null && (
                <p className="muted">
                  {t('var.default')}: <code>{showDefault(v.defaultValue)}</code>
                </p>
              )}
            </li>
          ),
        )}
      </ul>
      <NewVariable />
    </div>
  )
}

function VariableEditor({ variable, onDone }: { variable: Variable; onDone(): void }) {
  const t = useT()
  const { updateVariable } = useWorkspace()
  const [description, setDescription] = useState(variable.description ?? '')
  const [defaultText, setDefaultText] = useState(showDefault(variable.defaultValue))
  const [error, setError] = useState<string>()
  const parsed = parseDefault(variable.type, defaultText)
  return (
    <form
      className="variable-form"
      onSubmit={async (e) => {
        e.preventDefault()
        if (!parsed.ok) return
        try {
          await updateVariable(variable.id, { description: description.trim() || null, defaultValue: parsed.value })
          onDone()
        } catch (err) {
          setError(errorText(err, t))
        }
      }}
    >
      <p>
        <code>{variable.name}</code> <span className="badge">{t(`vtype.${variable.type}`)}</span>
      </p>
      <TextInput label={t('var.description')} value={description} onChange={setDescription} />
      <Field label={t('var.default')} error={parsed.ok ? undefined : t('var.badDefault')}>
        <input type="text" value={defaultText} onChange={(e) => setDefaultText(e.target.value)} />
      </Field>
      {error && <p className="field-error">{error}</p>}
      <div className="row">
        <button type="submit" disabled={!parsed.ok}>
          {t('var.save')}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          {t('var.cancel')}
        </button>
      </div>
    </form>
  )
}

function NewVariable() {
  const t = useT()
  const { createVariable } = useWorkspace()
  const [name, setName] = useState('')
  const [type, setType] = useState<VariableType>('string')
  const [description, setDescription] = useState('')
  const [defaultText, setDefaultText] = useState('')
  const [error, setError] = useState<string>()
  const parsed = parseDefault(type, defaultText)
  const valid = NAME.test(name) && parsed.ok
  return (
    <form
      className="variable-form"
      data-testid="new-variable"
      onSubmit={async (e) => {
        e.preventDefault()
        if (!valid || !parsed.ok) return
        setError(undefined)
        try {
          await createVariable({
            name,
            type,
            ...(description.trim() ? { description: description.trim() } : {}),
            ...(parsed.value !== null ? { defaultValue: parsed.value } : {}),
          })
          setName('')
          setDescription('')
          setDefaultText('')
        } catch (err) {
          setError(errorText(err, t))
        }
      }}
    >
      <h3>{t('var.new')}</h3>
      <TextInput label={t('var.name')} value={name} onChange={setName} hint={t('var.nameHint')} />
      <Select<VariableType> label={t('var.type')} value={type} options={TYPES.map((v) => ({ value: v, label: t(`vtype.${v}`) }))} onChange={setType} />
      <TextInput label={t('var.description')} value={description} onChange={setDescription} />
      <Field label={t('var.default')} error={parsed.ok ? undefined : t('var.badDefault')}>
        <input type="text" value={defaultText} onChange={(e) => setDefaultText(e.target.value)} />
      </Field>
      {error && <p className="field-error">{error}</p>}
      <button type="submit" disabled={!valid}>
        {t('var.create')}
      </button>
    </form>
  )
}
