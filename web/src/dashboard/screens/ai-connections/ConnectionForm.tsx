import { useState } from 'react'
import { Link } from 'wouter'
import { useActingWorkspace } from '../../acting-workspace'
import { api, unwrap } from '../../api'
import type { Async } from '../../components/async'
import { ErrorNotice, Field, errorAt, useFieldErrors } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import { CardForm, useSubmit } from '../workspaces/forms'
import type { AiConnection } from './api-types'
import { headerLines, parseHeaderLines } from './header-lines'

const FIELDS = ['name', 'baseUrl', 'apiKeySecret', 'model', 'maxTokensPerCall', 'callsPerSession'] as const
/** Problems of any header show on the headers' field. */
const HEADERS = 'headers.*'

interface Draft {
  name: string
  baseUrl: string
  apiKeySecret: string
  model: string
  headers: string
  maxTokensPerCall: string
  callsPerSession: string
}

const draftOf = (connection: AiConnection | undefined): Draft => ({
  name: connection?.name ?? '',
  baseUrl: connection?.baseUrl ?? '',
  apiKeySecret: connection?.apiKeySecret ?? '',
  model: connection?.model ?? '',
  headers: connection ? headerLines(connection.headers) : '',
  maxTokensPerCall: connection ? String(connection.maxTokensPerCall) : '',
  callsPerSession: connection ? String(connection.callsPerSession) : '',
})

/** A limit as typed: undefined when left empty (the service's default, or the limit kept), NaN when not a whole number. */
const limitOf = (text: string): number | undefined => (text.trim() === '' ? undefined : /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN)

/** What the form can tell before sending: a secret chosen, headers as lines, limits as whole numbers. The service checks the rest. */
function problemsOf(draft: Draft, t: Translate): Record<string, string> {
  const problems: Record<string, string> = {}
  if (draft.apiKeySecret === '') problems.apiKeySecret = t('aiConnections.field.secretRequired')
  if (!parseHeaderLines(draft.headers)) problems[HEADERS] = t('aiConnections.field.headerLine')
  for (const limit of ['maxTokensPerCall', 'callsPerSession'] as const) if (Number.isNaN(limitOf(draft[limit]))) problems[limit] = t('aiConnections.field.wholeNumber')
  return problems
}

/** What a failed save says about each field of the form, in the person's words. */
function useConnectionFieldErrors(error: unknown): Record<string, string> {
  const all = useFieldErrors(error)
  const errors: Record<string, string> = {}
  for (const field of FIELDS) if (all[field] !== undefined) errors[field] = all[field]
  const headers = errorAt(all, 'headers')
  if (headers !== undefined) errors[HEADERS] = headers
  return errors
}

/**
 * A new connection, or the settings of `editing`. The key is never typed here: the form chooses
 * the workspace secret that holds it, from `secrets`.
 */
export function ConnectionForm({
  editing,
  secrets,
  onCancel,
  onSaved,
}: {
  editing: AiConnection | undefined
  secrets: Async<string[]>
  onCancel(): void
  onSaved(name: string): void
}) {
  const t = useT()
  const { workspaceId } = useActingWorkspace()
  const [draft, setDraft] = useState(() => draftOf(editing))
  const [checked, setChecked] = useState<Record<string, string>>({})
  const submit = useSubmit()
  const errors = { ...useConnectionFieldErrors(submit.error), ...checked }
  const change = (field: keyof Draft) => (value: string) => {
    setDraft((current) => ({ ...current, [field]: value }))
    setChecked(({ [field === 'headers' ? HEADERS : field]: _changed, ...rest }) => rest)
  }

  const save = async () => {
    const problems = problemsOf(draft, t)
    setChecked(problems)
    if (Object.keys(problems).length > 0) return
    const headers = parseHeaderLines(draft.headers) ?? []
    const limits = { maxTokensPerCall: limitOf(draft.maxTokensPerCall), callsPerSession: limitOf(draft.callsPerSession) }
    const settings = { name: draft.name, baseUrl: draft.baseUrl.trim(), apiKeySecret: draft.apiKeySecret, model: draft.model, ...withoutEmpty(limits) }
    if (editing) await unwrap(api.PATCH('/v1/ai-connections/{id}', { params: { path: { id: editing.id } }, body: { ...settings, headers } }))
    else await unwrap(api.POST('/v1/ai-connections', { body: { ...settings, ...(headers.length > 0 ? { headers } : {}) } }))
    onSaved(draft.name)
  }

  const names = secrets.data ?? []
  const gone = draft.apiKeySecret !== '' && secrets.data !== undefined && !names.includes(draft.apiKeySecret)
  const limitHint = editing ? t('aiConnections.field.limitKept') : t('aiConnections.field.limitHint')

  return (
    <CardForm
      headingId={editing ? 'edit-ai-connection' : 'new-ai-connection'}
      heading={editing ? t('aiConnections.editing', { name: editing.name }) : t('aiConnections.new')}
      submit={submit}
      errors={errors}
      onSubmit={save}
      onCancel={editing ? onCancel : undefined}
    >
      <div className="form-row">
        <Field label={t('common.name')} error={errors.name}>
          {(props) => <input {...props} autoComplete="off" autoFocus={!!editing} value={draft.name} onChange={(event) => change('name')(event.target.value)} />}
        </Field>
        <Field label={t('aiConnections.model')} hint={t('aiConnections.field.modelHint')} error={errors.model}>
          {(props) => <input {...props} className="mono" autoComplete="off" spellCheck={false} value={draft.model} onChange={(event) => change('model')(event.target.value)} />}
        </Field>
      </div>
      <Field label={t('aiConnections.field.baseUrl')} hint={t('aiConnections.field.baseUrlHint')} error={errors.baseUrl}>
        {(props) => <input {...props} type="url" className="mono" autoComplete="off" spellCheck={false} placeholder="https://api.openai.com/v1" value={draft.baseUrl} onChange={(event) => change('baseUrl')(event.target.value)} />}
      </Field>
      <Field
        label={t('aiConnections.secret')}
        hint={
          <>
            {t('aiConnections.field.secretHint')} <Link href={`~/dashboard/workspaces/${workspaceId}/secrets`}>{t('aiConnections.field.secretsLink')}</Link>
          </>
        }
        error={errors.apiKeySecret}
      >
        {(props) => (
          <select {...props} className="mono" value={draft.apiKeySecret} onChange={(event) => change('apiKeySecret')(event.target.value)}>
            <option value="">{secrets.data && names.length === 0 ? t('aiConnections.field.noSecrets') : t('aiConnections.field.chooseSecret')}</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
            {gone && <option value={draft.apiKeySecret}>{t('aiConnections.field.secretGone', { name: draft.apiKeySecret })}</option>}
          </select>
        )}
      </Field>
      {secrets.error && <ErrorNotice error={secrets.error} onRetry={secrets.reload} />}
      <Field label={t('aiConnections.field.headers')} hint={t('aiConnections.field.headersHint')} error={errors[HEADERS]}>
        {(props) => <textarea {...props} className="mono" rows={2} spellCheck={false} value={draft.headers} onChange={(event) => change('headers')(event.target.value)} />}
      </Field>
      <div className="form-row">
        <Field label={t('aiConnections.field.maxTokensPerCall')} hint={limitHint} error={errors.maxTokensPerCall}>
          {(props) => <input {...props} inputMode="numeric" value={draft.maxTokensPerCall} onChange={(event) => change('maxTokensPerCall')(event.target.value)} />}
        </Field>
        <Field label={t('aiConnections.field.callsPerSession')} hint={limitHint} error={errors.callsPerSession}>
          {(props) => <input {...props} inputMode="numeric" value={draft.callsPerSession} onChange={(event) => change('callsPerSession')(event.target.value)} />}
        </Field>
      </div>
    </CardForm>
  )
}

const withoutEmpty = <T extends Record<string, number | undefined>>(values: T): Partial<Record<keyof T, number>> =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<Record<keyof T, number>>
