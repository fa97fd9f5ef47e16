import { useState } from 'react'
import { api, unwrap } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { Field } from '../../components/ui'
import { useT } from '../../i18n'
import { CardForm, DeleteAction, useFormFieldErrors, useSubmit } from './forms'
import { VARIABLE_TYPES, type Variable, type VariableType } from './api-types'
import { formatDefaultValue, parseDefaultValue } from './default-value'

/** The workspace's variables: flows use them by name, sessions pass their values. */
export function VariablesTab() {
  const t = useT()
  const variables = usePagedList((paging) => unwrap(api.GET('/v1/variables', { params: { query: paging } })), [])
  const [editing, setEditing] = useState<Variable>()
  const [announced, setAnnounced] = useState('')
  const changed = (message: string) => {
    setAnnounced(message)
    setEditing(undefined)
    variables.reload()
  }

  const columns: Column<Variable>[] = [
    { header: t('common.name'), className: 'mono', cell: (variable) => variable.name },
    { header: t('workspaces.variables.type'), cell: (variable) => t(`workspaces.variables.type.${variable.type}`) },
    { header: t('workspaces.variables.description'), cell: (variable) => variable.description ?? t('common.none') },
    {
      header: t('workspaces.variables.defaultValue'),
      className: 'mono ws-wrap',
      cell: (variable) => (variable.defaultValue === null ? t('common.none') : formatDefaultValue(variable.defaultValue)),
    },
    {
      header: t('common.actions'),
      className: 'ws-actions',
      cell: (variable) => (
        <>
          <button type="button" className="secondary" aria-label={t('workspaces.variables.editOf', { name: variable.name })} onClick={() => setEditing(variable)}>
            {t('workspaces.variables.edit')}
          </button>
          <DeleteAction
            name={variable.name}
            question={t('workspaces.variables.confirmDelete', { name: variable.name })}
            onDelete={async () => {
              await unwrap(api.DELETE('/v1/variables/{id}', { params: { path: { id: variable.id } } }))
              changed(t('workspaces.variables.deleted', { name: variable.name }))
            }}
          />
        </>
      ),
    },
  ]

  return (
    <>
      <h2>{t('workspaces.variables.title')}</h2>
      <p className="hint">{t('workspaces.variables.intro')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      <ListView list={variables} empty={t('workspaces.variables.empty')} rowKey={(variable) => variable.id} columns={columns} />
      <VariableForm
        key={editing?.id ?? 'new'}
        editing={editing}
        onCancel={() => setEditing(undefined)}
        onSaved={(name) => changed(editing ? t('workspaces.variables.updated', { name }) : t('workspaces.variables.created', { name }))}
      />
    </>
  )
}

const VARIABLE_FIELDS = ['name', 'type', 'description', 'defaultValue'] as const

/** A new variable, or the description and default of an existing one (its name and type never change). */
function VariableForm({ editing, onCancel, onSaved }: { editing: Variable | undefined; onCancel(): void; onSaved(name: string): void }) {
  const t = useT()
  const [name, setName] = useState(editing?.name ?? '')
  const [type, setType] = useState<VariableType>(editing?.type ?? 'string')
  const [description, setDescription] = useState(editing?.description ?? '')
  const [defaultText, setDefaultText] = useState(editing ? formatDefaultValue(editing.defaultValue) : '')
  const submit = useSubmit()
  const errors = useFormFieldErrors(submit.error, VARIABLE_FIELDS)
  const headingId = editing ? 'edit-variable' : 'new-variable'

  const save = async () => {
    const defaultValue = parseDefaultValue(type, defaultText)
    if (editing) {
      await unwrap(api.PATCH('/v1/variables/{id}', { params: { path: { id: editing.id } }, body: { description: description.trim() ? description : null, defaultValue } }))
    } else {
      await unwrap(
        api.POST('/v1/variables', {
          body: { name, type, ...(description.trim() ? { description } : {}), ...(defaultValue !== null ? { defaultValue } : {}) },
        }),
      )
    }
    onSaved(name)
  }

  return (
    <CardForm
      headingId={headingId}
      heading={editing ? t('workspaces.variables.editing', { name: editing.name }) : t('workspaces.variables.new')}
      submit={submit}
      errors={errors}
      onSubmit={save}
      onCancel={editing ? onCancel : undefined}
    >
      <div className="form-row">
        <Field label={t('common.name')} hint={editing ? t('workspaces.variables.fixed') : t('workspaces.variables.nameHint')} error={errors.name}>
          {(props) => <input {...props} className="mono" readOnly={!!editing} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label={t('workspaces.variables.type')} error={errors.type}>
          {(props) => (
            <select {...props} value={type} disabled={!!editing} onChange={(event) => setType(event.target.value as VariableType)}>
              {VARIABLE_TYPES.map((option) => (
                <option key={option} value={option}>
                  {t(`workspaces.variables.type.${option}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label={t('workspaces.variables.description')} error={errors.description}>
        {(props) => <input {...props} value={description} onChange={(event) => setDescription(event.target.value)} />}
      </Field>
      <Field label={t('workspaces.variables.defaultValue')} hint={t(`workspaces.variables.defaultHint.${type}`)} error={errors.defaultValue}>
        {(props) =>
          type === 'boolean' ? (
            <select {...props} value={defaultText} onChange={(event) => setDefaultText(event.target.value)}>
              <option value="">{t('workspaces.variables.noDefault')}</option>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : type === 'object' ? (
            <textarea {...props} className="mono" rows={3} value={defaultText} onChange={(event) => setDefaultText(event.target.value)} />
          ) : (
            <input {...props} inputMode={type === 'number' ? 'decimal' : undefined} value={defaultText} onChange={(event) => setDefaultText(event.target.value)} />
          )
        }
      </Field>
    </CardForm>
  )
}
