import { useState } from 'react'
import { api, unwrap, type paths } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, Pager, SecretValue } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { pagingOf, useQueryParams } from '../../components/address'
import { ConfirmAction, fieldErrors, SubmitError, useSubmit } from './forms'
import type { ApiKey, Workspace } from './api-types'

type CreatedKey = paths['/v1/api-keys']['post']['responses'][201]['content']['application/json']
type Role = ApiKey['role']

/** The workspace's API keys: listed without secrets, created (key and signing secret shown once), revoked. */
export function ApiKeysTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const info = useSignedIn()
  const [params, setParams] = useQueryParams()
  const { page, size } = pagingOf(params)
  const keys = useAsync(() => unwrap(api.GET('/v1/api-keys', { params: { query: { workspaceId: workspace.id, page, size } } })), [workspace.id, page, size])
  const [created, setCreated] = useState<CreatedKey>()

  return (
    <>
      <h2>{t('workspaces.keys.title')}</h2>
      <p className="hint">{t('workspaces.keys.intro')}</p>
      {keys.error && <ErrorNotice error={keys.error} onRetry={keys.reload} />}
      {!keys.data && !keys.error && <Loading />}
      {keys.data && keys.data.content.length === 0 && <Empty>{t('workspaces.keys.empty')}</Empty>}
      {keys.data && keys.data.content.length > 0 && (
        <>
          <table className="ws-table">
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('workspaces.keys.role')}</th>
                <th scope="col">{t('workspaces.keys.prefix')}</th>
                <th scope="col">{t('workspaces.keys.callbackUrl')}</th>
                <th scope="col">{t('common.createdAt')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.content.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <span className="badge">{t(`workspaces.keys.role.${key.role}`)}</span>
                  </td>
                  <td className="mono">{key.keyPrefix}…</td>
                  <td className="mono ws-wrap">{key.callbackUrl ?? t('common.none')}</td>
                  <td>
                    <DateTime value={key.createdAt} />
                  </td>
                  <td>
                    {key.id === info.apiKeyId ? (
                      <span className="badge">{t('workspaces.keys.thisSession')}</span>
                    ) : (
                      <ConfirmAction
                        label={t('common.revoke')}
                        subject={key.name}
                        question={t('common.confirmRevoke', { name: key.name })}
                        onConfirm={async () => {
                          await unwrap(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: key.id } } }))
                          keys.reload()
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={keys.data.totalPages} totalElements={keys.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
      {created ? (
        <CreatedKeyCard created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <NewApiKey
          workspace={workspace}
          onCreated={(key) => {
            setCreated(key)
            keys.reload()
          }}
        />
      )}
    </>
  )
}

function CreatedKeyCard({ created, onDone }: { created: CreatedKey; onDone(): void }) {
  const t = useT()
  return (
    <section className="card ws-created" aria-labelledby="created-key">
      <h2 id="created-key">{t('workspaces.keys.created', { name: created.name })}</h2>
      <p className="notice warn" role="status">
        {t('common.shownOnce')}
      </p>
      <SecretValue label={t('workspaces.keys.apiKey')} value={created.apiKey} testId="created-api-key" />
      <p className="hint">{t('workspaces.keys.apiKeyHint')}</p>
      <SecretValue label={t('workspaces.keys.signingSecret')} value={created.signingSecret} testId="created-signing-secret" />
      <p className="hint">{t('workspaces.keys.signingSecretHint')}</p>
      <button type="button" onClick={onDone}>
        {t('workspaces.keys.done')}
      </button>
    </section>
  )
}

const KEY_FIELDS = ['name', 'callbackUrl', 'role'] as const

function NewApiKey({ workspace, onCreated }: { workspace: Workspace; onCreated(key: CreatedKey): void }) {
  const t = useT()
  const info = useSignedIn()
  const [name, setName] = useState('')
  const [callbackUrl, setCallbackUrl] = useState('')
  const [role, setRole] = useState<Role>('workspace')
  const submit = useSubmit()
  const errors = fieldErrors(submit.error, KEY_FIELDS)
  const mayChooseRole = info.role === 'organization-admin'
  return (
    <form
      className="card ws-form"
      noValidate
      aria-labelledby="new-key"
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(async () => {
          onCreated(await unwrap(api.POST('/v1/api-keys', { body: { name, callbackUrl, role, workspaceId: workspace.id } })))
        })
      }}
    >
      <h2 id="new-key">{t('workspaces.keys.new')}</h2>
      <div className="form-row">
        <Field label={t('common.name')} error={errors.name}>
          {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label={t('workspaces.keys.role')} hint={mayChooseRole ? t('workspaces.keys.roleHint') : t('workspaces.keys.roleFixed')} error={errors.role}>
          {(props) => (
            <select {...props} value={role} disabled={!mayChooseRole} onChange={(event) => setRole(event.target.value as Role)}>
              <option value="workspace">{t('workspaces.keys.role.workspace')}</option>
              <option value="organization-admin">{t('workspaces.keys.role.organization-admin')}</option>
            </select>
          )}
        </Field>
      </div>
      <Field
        label={t('workspaces.keys.callbackUrl')}
        hint={errors.callbackUrl ? t('workspaces.keys.callbackRefusedWhy') : t('workspaces.keys.callbackHint')}
        error={errors.callbackUrl}
      >
        {(props) => (
          <input {...props} type="url" inputMode="url" placeholder="https://hooks.example.com/flow" value={callbackUrl} onChange={(event) => setCallbackUrl(event.target.value)} />
        )}
      </Field>
      <SubmitError error={submit.error} fields={errors} />
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? t('common.creating') : t('common.create')}
      </button>
    </form>
  )
}
