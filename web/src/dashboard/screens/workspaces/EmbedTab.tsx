import { useId, useState } from 'react'
import { messageText } from '../../../shared/api-problems'
import type { Lang, Theme } from '../../../shared/i18n'
import { api, unwrap, type paths } from '../../api'
import { useAsync } from '../../components/async'
import { EditorFrame, type EditorStatus } from '../../components/EditorFrame'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { CopyButton, DateTime, ErrorNotice, Field, Loading, SecretValue } from '../../components/ui'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import { CardForm, useFormFieldErrors, RevokeAction, useSubmit } from './forms'
import type { Flow, OAuthClient, Workspace } from './api-types'
import { flowsOf } from './lookups'
import { curlSnippet, hostScriptSnippet, iframeSnippet, nodeSnippet, PLACEHOLDER, type EmbedValues } from './snippets'

type CreatedClient = paths['/v1/clients']['post']['responses'][201]['content']['application/json']

/**
 * Embedding the editor: the workspace's OAuth clients, the customer's code filled with this
 * service's address and a client, and the editor itself, tried here.
 */
export function EmbedTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const preferences = usePreferences()
  const [created, setCreated] = useState<CreatedClient>()
  const [chosenClientId, setChosenClientId] = useState<string>()
  const [chosenFlowId, setChosenFlowId] = useState<string>()
  const [lang, setLang] = useState<Lang>(preferences.lang)
  const [theme, setTheme] = useState<Theme>(preferences.theme)
  const clients = usePagedList((paging) => unwrap(api.GET('/v1/clients', { params: { query: paging } })), [])
  const flows = useAsync(() => flowsOf(workspace.id), [workspace.id])
  const clientColumns = useClientColumns((revoked) => {
    if (revoked === chosenClientId) setChosenClientId(undefined)
    if (revoked === created?.clientId) setCreated(undefined)
    clients.reload()
  })

  const clientId = chosenClientId ?? created?.clientId ?? clients.data?.content[0]?.clientId
  const flowId = chosenFlowId ?? flows.data?.[0]?.id
  const values: EmbedValues = {
    origin: window.location.origin,
    clientId: clientId ?? PLACEHOLDER.clientId,
    clientSecret: created && created.clientId === clientId ? created.clientSecret : PLACEHOLDER.clientSecret,
    flowId: flowId ?? PLACEHOLDER.flowId,
    lang,
    theme,
  }

  return (
    <>
      <h2>{t('workspaces.embed.clients')}</h2>
      <p className="hint">{t('workspaces.embed.clientsIntro')}</p>
      <ListView list={clients} empty={t('workspaces.embed.noClients')} rowKey={(client) => client.clientId} columns={clientColumns} />
      {created && <CreatedClientCard created={created} />}
      <NewClient
        onCreated={(client) => {
          setCreated(client)
          setChosenClientId(client.clientId)
          clients.reload()
        }}
      />

      <h2>{t('workspaces.embed.code')}</h2>
      <p className="hint">{t('workspaces.embed.codeIntro')}</p>
      <div className="card">
        <div className="form-row">
          {clients.data && clients.data.content.length > 0 && (
            <Field label={t('workspaces.embed.client')}>
              {(props) => (
                <select {...props} value={clientId} onChange={(event) => setChosenClientId(event.target.value)}>
                  {clients.data!.content.map((client) => (
                    <option key={client.clientId} value={client.clientId}>
                      {client.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <FlowPicker flows={flows.data} value={flowId} onChange={setChosenFlowId} />
          <Field label={t('workspaces.embed.lang')}>
            {(props) => (
              <select {...props} value={lang} onChange={(event) => setLang(event.target.value as Lang)}>
                <option value="en">English (en)</option>
                <option value="pt">Português (pt)</option>
              </select>
            )}
          </Field>
          <Field label={t('workspaces.embed.theme')}>
            {(props) => (
              <select {...props} value={theme} onChange={(event) => setTheme(event.target.value as Theme)}>
                <option value="light">{t('prefs.light')} (light)</option>
                <option value="dark">{t('prefs.dark')} (dark)</option>
              </select>
            )}
          </Field>
        </div>
        {flows.error && <ErrorNotice error={flows.error} onRetry={flows.reload} />}
        {values.clientSecret === PLACEHOLDER.clientSecret && <p className="hint">{t('workspaces.embed.secretPlaceholder')}</p>}
        <h3>{t('workspaces.embed.step1')}</h3>
        <Snippet title={t('workspaces.embed.curl')} code={curlSnippet(values)} testId="snippet-curl" />
        <Snippet title={t('workspaces.embed.node')} code={nodeSnippet(values)} testId="snippet-node" />
        <h3>{t('workspaces.embed.step2')}</h3>
        <Snippet title={t('workspaces.embed.iframe')} code={iframeSnippet(values)} testId="snippet-iframe" />
        <Snippet title={t('workspaces.embed.script')} code={hostScriptSnippet(values)} testId="snippet-script" />
        <p className="hint">{t('workspaces.embed.handshake')}</p>
      </div>

      <h2>{t('workspaces.embed.try')}</h2>
      <TryIt workspace={workspace} flowId={flowId} lang={lang} theme={theme} />
    </>
  )
}

function useClientColumns(onRevoked: (clientId: string) => void): Column<OAuthClient>[] {
  const t = useT()
  return [
    { header: t('common.name'), cell: (client) => client.name },
    { header: t('workspaces.embed.clientId'), className: 'mono', cell: (client) => client.clientId },
    { header: t('common.createdAt'), cell: (client) => <DateTime value={client.createdAt} /> },
    {
      header: t('common.actions'),
      cell: (client) => (
        <RevokeAction
          name={client.name}
          onRevoke={async () => {
            await unwrap(api.DELETE('/v1/clients/{clientId}', { params: { path: { clientId: client.clientId } } }))
            onRevoked(client.clientId)
          }}
        />
      ),
    },
  ]
}

function CreatedClientCard({ created }: { created: CreatedClient }) {
  const t = useT()
  return (
    <section className="card ws-created" aria-labelledby="created-client">
      <h3 id="created-client">{t('workspaces.embed.created', { name: created.name })}</h3>
      <p className="notice warn" role="status">
        {t('common.shownOnce')} {t('workspaces.embed.secretBackendOnly')}
      </p>
      <SecretValue label={t('workspaces.embed.clientId')} value={created.clientId} testId="created-client-id" />
      <SecretValue label={t('workspaces.embed.clientSecret')} value={created.clientSecret} testId="created-client-secret" />
    </section>
  )
}

function NewClient({ onCreated }: { onCreated(client: CreatedClient): void }) {
  const t = useT()
  const [name, setName] = useState('')
  const submit = useSubmit()
  const errors = useFormFieldErrors(submit.error, ['name'])
  const create = async () => {
    onCreated(await unwrap(api.POST('/v1/clients', { body: { name } })))
    setName('')
  }

  return (
    <CardForm headingId="new-client" heading={t('workspaces.embed.newClient')} submit={submit} errors={errors} onSubmit={create}>
      <Field label={t('common.name')} hint={t('workspaces.embed.clientNameHint')} error={errors.name}>
        {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
      </Field>
    </CardForm>
  )
}

function FlowPicker({ flows, value, onChange }: { flows: Flow[] | undefined; value: string | undefined; onChange(flowId: string): void }) {
  const t = useT()
  if (!flows) return <Loading />
  if (flows.length === 0) return <p className="hint ws-no-flows">{t('workspaces.embed.noFlows')}</p>
  return (
    <Field label={t('workspaces.embed.flow')}>
      {(props) => (
        <select {...props} value={value} onChange={(event) => onChange(event.target.value)}>
          {flows.map((flow) => (
            <option key={flow.id} value={flow.id}>
              {flow.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

function Snippet({ title, code, testId }: { title: string; code: string; testId: string }) {
  const id = useId()
  return (
    <section className="ws-snippet" aria-labelledby={id}>
      <div className="ws-snippet-head">
        <h4 id={id}>{title}</h4>
        <CopyButton value={code} label={title} />
      </div>
      {/* Focusable: a long line scrolls, and the keyboard must reach it. */}
      <pre className="snippet" tabIndex={0} data-testid={testId}>
        {code}
      </pre>
    </section>
  )
}

/** The editor on a flow of this workspace, inside the tab, signed in by the dashboard's own session. */
function TryIt({ workspace, flowId, lang, theme }: { workspace: Workspace; flowId: string | undefined; lang: Lang; theme: Theme }) {
  const t = useT()
  const [open, setOpen] = useState(false)
  const [status, setStatus] = useState<EditorStatus>()
  if (!flowId) return <p className="hint">{t('workspaces.embed.tryNoFlow')}</p>
  return (
    <div className="ws-try">
      <p className="hint">{t('workspaces.embed.tryIntro')}</p>
      <div className="ws-try-bar">
        <button type="button" onClick={() => setOpen((shown) => !shown)} aria-expanded={open}>
          {open ? t('workspaces.embed.tryClose') : t('workspaces.embed.tryOpen')}
        </button>
        <p role="status" className="ws-try-status">
          {open && status ? <EditorStatusText status={status} /> : null}
        </p>
      </div>
      {open && (
        <EditorFrame key={`${flowId}-${lang}-${theme}`} workspaceId={workspace.id} flowId={flowId} lang={lang} theme={theme} title={t('workspaces.embed.frameTitle')} onStatus={setStatus} />
      )}
    </div>
  )
}

function EditorStatusText({ status }: { status: EditorStatus }) {
  const t = useT()
  switch (status.type) {
    case 'loading':
      return <>{t('workspaces.embed.status.loading')}</>
    case 'ready':
      return <>{t('workspaces.embed.status.ready')}</>
    case 'authenticated':
      return <span className="badge">{t('workspaces.embed.status.authenticated')}</span>
    case 'saved':
      return <>{t('workspaces.embed.status.saved')}</>
    case 'published':
      return <>{t('workspaces.embed.status.published', { version: status.version })}</>
    case 'error':
      return <span className="badge">{t('workspaces.embed.status.error', { code: status.code, message: messageText(status.message, t) })}</span>
  }
}
