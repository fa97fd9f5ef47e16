import { useState, type FormEvent } from 'react'
import { useLocation } from 'wouter'
import { api, unwrap } from '../../api'
import { useActingWorkspace } from '../../acting-workspace'
import { useAsync } from '../../components/async'
import { Field, FormError, Loading, SelectField, useFieldErrors } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import type { Release } from '../flows/api-types'
import type { Variable } from '../workspaces/api-types'
import { formatDefaultValue, parseDefaultValue } from '../workspaces/default-value'
import './sessions.css'

/** Which versions a new session may start on: the live one, and the one in gradual release with its share. */
const releaseWords = ({ liveVersion, gradual }: Release) => ({ version: liveVersion, gradual: gradual?.version ?? '', percent: gradual?.percent ?? '' })

/** The API takes at most this many variables in a page: a workspace's variables are listed whole up to it. */
const LARGEST_PAGE = 100

/**
 * Starts a session as the API does (POST /v1/sessions/flows/{flowId}/create, acting as the signed-in
 * key): the flow's live version (or the one in gradual release, for its share), the contact's id, the workspace's variables typed, the
 * callback its webhooks go to. The new session's page opens, following it live.
 */
export function StartSessionForm({ flow }: { flow?: { id: string; name: string; release: Release } }) {
  const t = useT()
  const [, navigate] = useLocation()
  const { workspaceId } = useActingWorkspace()
  const [chosenFlow, setChosenFlow] = useState(flow?.id ?? '')
  const [externalId, setExternalId] = useState('')
  const [texts, setTexts] = useState<Record<string, string>>({})
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const flows = useAsync(async () => (flow ? [] : (await unwrap(api.GET('/v1/flows', { params: { query: { workspaceId, size: LARGEST_PAGE, orderBy: 'name' } } }))).content), [flow, workspaceId])
  const chosen = useAsync(async () => (flow ? flow : chosenFlow ? await unwrap(api.GET('/v1/flows/{id}', { params: { path: { id: chosenFlow } } })) : undefined), [flow, chosenFlow])
  const variables = useAsync(async () => (await unwrap(api.GET('/v1/variables', { params: { query: { size: LARGEST_PAGE } } }))).content, [workspaceId])
  const fields = useFieldErrors(error)

  async function submit(event: FormEvent) {
    event.preventDefault()
    if (!chosenFlow) return
    setBusy(true)
    setError(undefined)
    try {
      const values = Object.fromEntries(
        (variables.data ?? []).flatMap((variable) => {
          const value = parseDefaultValue(variable.type, texts[variable.name] ?? '')
          return value === null ? [] : [[variable.name, value]]
        }),
      )
      const created = await unwrap(
        api.POST('/v1/sessions/flows/{flowId}/create', { params: { path: { flowId: chosenFlow } }, body: { variables: values, ...(externalId.trim() ? { externalId: externalId.trim() } : {}) } }),
      )
      navigate(`~/dashboard/sessions/${created.sessionId}`)
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }

  const shownOnFields = ['externalId', ...(variables.data ?? []).map((variable) => `variables.${variable.name}`)]
  return (
    <form className="start-session" aria-label={t('sessions.start.title')} onSubmit={(event) => void submit(event)} noValidate>
      <p className="hint">{t('sessions.start.intro')}</p>
      <dl className="start-session-facts">
        {flow && (
          <div>
            <dt>{t('sessions.field.flow')}</dt>
            <dd>{t(flow.release.gradual ? 'sessions.start.flowGradual' : 'sessions.start.flowVersion', { name: flow.name, ...releaseWords(flow.release) })}</dd>
          </div>
        )}
        <Callback />
      </dl>
      <div className="form-row">
        {!flow && (
          <SelectField
            label={t('sessions.field.flow')}
            value={chosenFlow}
            onChange={setChosenFlow}
            blank={t('sessions.start.chooseFlow')}
            options={(flows.data ?? []).map((item) => ({ value: item.id, label: item.name }))}
          />
        )}
        <Field label={t('sessions.start.contact')} hint={t('sessions.start.contactHint')} error={fields.externalId}>
          {(props) => <input {...props} value={externalId} onChange={(event) => setExternalId(event.target.value)} maxLength={256} autoComplete="off" />}
        </Field>
      </div>
      {!flow && chosen.data && <p className="hint">{t(chosen.data.release.gradual ? 'sessions.start.runsGradual' : 'sessions.start.runsVersion', releaseWords(chosen.data.release))}</p>}
      <fieldset className="start-session-variables">
        <legend>{t('sessions.start.variables')}</legend>
        {!variables.data && !variables.error && <Loading />}
        {variables.data?.length === 0 && <p className="hint">{t('sessions.start.noVariables')}</p>}
        <div className="form-row">
          {variables.data?.map((variable) => (
            <VariableInput key={variable.id} variable={variable} text={texts[variable.name] ?? ''} error={fields[`variables.${variable.name}`]} onChange={(text) => setTexts({ ...texts, [variable.name]: text })} />
          ))}
        </div>
      </fieldset>
      <FormError error={error ?? variables.error} shownOnFields={shownOnFields} />
      <button type="submit" disabled={busy || !chosenFlow}>
        {busy ? t('sessions.start.starting') : t('sessions.start.submit')}
      </button>
    </form>
  )
}

/** A variable's value, typed as the variable is; empty leaves it to its default. */
function VariableInput({ variable, text, error, onChange }: { variable: Variable; text: string; error?: string; onChange(text: string): void }) {
  const t = useT()
  const label = `${variable.name} (${t(`workspaces.variables.type.${variable.type}`)})`
  const fallback = variable.defaultValue === null ? t('sessions.start.noDefault') : t('sessions.start.default', { value: formatDefaultValue(variable.defaultValue) })
  const hint = [variable.description, fallback].filter(Boolean).join(' · ')
  return (
    <Field label={label} hint={hint} error={error}>
      {(props) =>
        variable.type === 'boolean' ? (
          <select {...props} value={text} onChange={(event) => onChange(event.target.value)}>
            <option value="">{t('sessions.start.unset')}</option>
            <option value="true">{t('common.yes')}</option>
            <option value="false">{t('common.no')}</option>
          </select>
        ) : variable.type === 'object' ? (
          <textarea {...props} className="mono" rows={2} value={text} onChange={(event) => onChange(event.target.value)} spellCheck={false} placeholder="{}" />
        ) : (
          <input {...props} type={variable.type === 'number' ? 'number' : 'text'} value={text} onChange={(event) => onChange(event.target.value)} />
        )
      }
    </Field>
  )
}

/** Where the session's webhooks go (a term of the form's facts): the callback URL of the key the dashboard acts as. */
function Callback() {
  const t = useT()
  const info = useSignedIn()
  const key = useAsync(
    async () => (await unwrap(api.GET('/v1/api-keys', { params: { query: { workspaceId: info.workspaceId, size: LARGEST_PAGE } } }))).content.find((item) => item.id === info.apiKeyId),
    [info.apiKeyId, info.workspaceId],
  )
  if (!key.data && !key.error) return null
  return (
    <div>
      <dt>{t('sessions.start.callback')}</dt>
      <dd>
        {key.data?.callbackUrl ? (
          <>
            <span className="mono" data-testid="start-callback">
              {key.data.callbackUrl}
            </span>
            <span className="hint"> · {t('sessions.start.callbackHint', { key: key.data.name })}</span>
          </>
        ) : (
          <span className="hint">{t('sessions.start.noCallback')}</span>
        )}
      </dd>
    </div>
  )
}
