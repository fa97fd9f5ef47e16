import { useState } from 'react'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { Empty, ErrorNotice, Field, Loading, Pager } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { pagingOf, useQueryParams } from '../../components/address'
import { ConfirmAction, fieldErrors, SubmitError, useSubmit } from './forms'
import { VARIABLE_TYPES, type Variable, type VariableType, type Workspace } from './api-types'
import { formatDefaultValue, parseDefaultValue } from './default-value'
import { OtherWorkspaceNotice } from './OtherWorkspace'

/** The workspace's variables: flows use them by name, sessions pass their values. */
export function VariablesTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const info = useSignedIn()
  if (workspace.id !== info.workspaceId) {
    return (
      <>
        <h2>{t('workspaces.variables.title')}</h2>
        <OtherWorkspaceNotice workspace={workspace} message={t('workspaces.other.variables', { name: workspace.name })} />
      </>
    )
  }
  return <OwnVariables />
}

function OwnVariables() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const { page, size } = pagingOf(params)
  const variables = useAsync(() => unwrap(api.GET('/v1/variables', { params: { query: { page, size } } })), [page, size])
  const [editing, setEditing] = useState<Variable>()
  const [announced, setAnnounced] = useState('')
  const changed = (message: string) => {
    setAnnounced(message)
    setEditing(undefined)
    variables.reload()
  }

  return (
    <>
      <h2>{t('workspaces.variables.title')}</h2>
      <p className="hint">{t('workspaces.variables.intro')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      {variables.error && <ErrorNotice error={variables.error} onRetry={variables.reload} />}
      {!variables.data && !variables.error && <Loading />}
      {variables.data && variables.data.content.length === 0 && <Empty>{t('workspaces.variables.empty')}</Empty>}
      {variables.data && variables.data.content.length > 0 && (
        <>
          <table className="ws-table">
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('workspaces.variables.type')}</th>
                <th scope="col">{t('workspaces.variables.description')}</th>
                <th scope="col">{t('workspaces.variables.defaultValue')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {variables.data.content.map((variable) => (
                <tr key={variable.id}>
                  <td className="mono">{variable.name}</td>
                  <td>{t(`workspaces.variables.type.${variable.type}`)}</td>
                  <td>{variable.description ?? t('common.none')}</td>
                  <td className="mono ws-wrap">{variable.defaultValue === null ? t('common.none') : formatDefaultValue(variable.defaultValue)}</td>
                  <td className="ws-actions">
                    <button type="button" className="secondary" aria-label={t('workspaces.variables.editOf', { name: variable.name })} onClick={() => setEditing(variable)}>
                      {t('workspaces.variables.edit')}
                    </button>
                    <ConfirmAction
                      label={t('workspaces.delete')}
                      subject={variable.name}
                      question={t('workspaces.variables.confirmDelete', { name: variable.name })}
                      onConfirm={async () => {
                        await unwrap(api.DELETE('/v1/variables/{id}', { params: { path: { id: variable.id } } }))
                        changed(t('workspaces.variables.deleted', { name: variable.name }))
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={variables.data.totalPages} totalElements={variables.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
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
  const errors = fieldErrors(submit.error, VARIABLE_FIELDS, 'name')
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
    <form
      className="card ws-form"
      aria-labelledby={headingId}
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(save)
      }}
    >
      <h3 id={headingId}>{editing ? t('workspaces.variables.editing', { name: editing.name }) : t('workspaces.variables.new')}</h3>
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
      <SubmitError error={submit.error} fields={errors} />
      <div className="ws-actions">
        <button type="submit" disabled={submit.busy}>
          {editing ? (submit.busy ? t('common.saving') : t('common.save')) : submit.busy ? t('common.creating') : t('common.create')}
        </button>
        {editing && (
          <button type="button" className="secondary" onClick={onCancel}>
            {t('common.cancel')}
          </button>
        )}
      </div>
    </form>
  )
}
