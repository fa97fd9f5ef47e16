import { useState } from 'react'
import { api, unwrap, type paths } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime, Field, SecretValue } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { CardForm, useFormFieldErrors, RevokeAction, useSubmit } from './forms'
import type { ApiKey, Workspace } from './api-types'

type CreatedKey = paths['/v1/api-keys']['post']['responses'][201]['content']['application/json']
type Role = ApiKey['role']

/** The workspace's API keys: listed without secrets, created (key and signing secret shown once), revoked. */
export function ApiKeysTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const info = useSignedIn()
  const keys = usePagedList((paging) => unwrap(api.GET('/v1/api-keys', { params: { query: { workspaceId: workspace.id, ...paging } } })), [workspace.id])
  const [created, setCreated] = useState<CreatedKey>()

  const columns: Column<ApiKey>[] = [
    { header: t('common.name'), cell: (key) => key.name },
    { header: t('workspaces.keys.role'), cell: (key) => <span className="badge">{t(`workspaces.keys.role.${key.role}`)}</span> },
    { header: t('workspaces.keys.prefix'), className: 'mono', cell: (key) => `${key.keyPrefix}…` },
    { header: t('workspaces.keys.callbackUrl'), className: 'mono ws-wrap', cell: (key) => key.callbackUrl ?? t('common.none') },
    { header: t('common.createdAt'), cell: (key) => <DateTime value={key.createdAt} /> },
    {
      header: t('common.actions'),
      cell: (key) =>
        key.id === info.apiKeyId ? (
          <span className="badge">{t('workspaces.keys.thisSession')}</span>
        ) : (
          <RevokeAction
            name={key.name}
            onRevoke={async () => {
              await unwrap(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: key.id } } }))
              keys.reload()
            }}
          />
        ),
    },
  ]

  return (
    <>
      <h2>{t('workspaces.keys.title')}</h2>
      <p className="hint">{t('workspaces.keys.intro')}</p>
      <ListView list={keys} empty={t('workspaces.keys.empty')} rowKey={(key) => key.id} columns={columns} />
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
  const errors = useFormFieldErrors(submit.error, KEY_FIELDS)
  const mayChooseRole = info.role === 'organization-admin'
  const create = async () => {
    onCreated(await unwrap(api.POST('/v1/api-keys', { body: { name, callbackUrl, role, workspaceId: workspace.id } })))
  }

  return (
    <CardForm headingId="new-key" heading={t('workspaces.keys.new')} level={2} submit={submit} errors={errors} onSubmit={create}>
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
          <input {...props} type="url" inputMode="url" required pattern="https://.+" placeholder="https://hooks.example.com/flow" value={callbackUrl} onChange={(event) => setCallbackUrl(event.target.value)} />
        )}
      </Field>
    </CardForm>
  )
}
