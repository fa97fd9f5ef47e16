import { useState } from 'react'
import '../../../shared/text-length.css'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { CopyButton, DateTime, Field } from '../../components/ui'
import { MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_WORKSPACE, SECRET_NAME_PATTERN } from '../../../../../src/domain/secret-rules.js'
import { useT, type Translate } from '../../i18n'
import type { Secret } from './api-types'
import { CardForm, DeleteAction, useFormFieldErrors, useSubmit } from './forms'

/** One page of the largest size lists every secret a workspace may hold. */
const ALL = { page: 0, size: MAX_SECRETS_PER_WORKSPACE }

const bytesOf = (value: string) => new TextEncoder().encode(value).length
const reference = (name: string) => `{{secrets.${name}}}`

/** The workspace's secrets: listed by name and dates, added, given a new value, deleted; a value is never shown. */
export function SecretsTab() {
  const t = useT()
  const [version, setVersion] = useState(0)
  const secrets = usePagedList((paging) => unwrap(api.GET('/v1/secrets', { params: { query: paging } })), [version])
  // Every name, so adding one that exists says it replaces that secret's value.
  const names = useAsync(async () => new Set((await unwrap(api.GET('/v1/secrets', { params: { query: ALL } }))).content.map((secret) => secret.name)), [version])
  const [replacing, setReplacing] = useState<Secret>()
  const [announced, setAnnounced] = useState('')
  const changed = (message: string) => {
    setAnnounced(message)
    setReplacing(undefined)
    setVersion((v) => v + 1)
  }

  const columns: Column<Secret>[] = [
    { header: t('common.name'), className: 'mono', namesRow: true, cell: (secret) => secret.name },
    {
      header: t('workspaces.secrets.use'),
      cell: (secret) => (
        <span className="ws-secret-use">
          <code>{reference(secret.name)}</code>
          <CopyButton value={reference(secret.name)} label={reference(secret.name)} />
        </span>
      ),
    },
    { header: t('common.createdAt'), cell: (secret) => <DateTime value={secret.createdAt} /> },
    { header: t('common.updatedAt'), cell: (secret) => <DateTime value={secret.updatedAt} /> },
    {
      header: t('common.actions'),
      className: 'ws-actions',
      cell: (secret) => (
        <>
          <button type="button" className="secondary" aria-label={`${t('workspaces.secrets.replace')}: ${secret.name}`} onClick={() => setReplacing(secret)}>
            {t('workspaces.secrets.replace')}
          </button>
          <DeleteAction
            name={secret.name}
            question={t('workspaces.secrets.confirmDelete', { name: secret.name })}
            onDelete={async () => {
              await unwrap(api.DELETE('/v1/secrets/{name}', { params: { path: { name: secret.name } } }))
              changed(t('workspaces.secrets.deleted', { name: secret.name }))
            }}
          />
        </>
      ),
    },
  ]

  return (
    <>
      <h2>{t('workspaces.secrets.title')}</h2>
      <p className="hint">{t('workspaces.secrets.intro')}</p>
      <p className="hint">{t('workspaces.secrets.writeOnly')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      <ListView list={secrets} empty={t('workspaces.secrets.empty')} rowKey={(secret) => secret.name} columns={columns} />
      <SecretForm
        key={replacing?.name ?? 'new'}
        replacing={replacing}
        taken={names.data}
        onCancel={() => setReplacing(undefined)}
        onSaved={(name, created) => changed(created ? t('workspaces.secrets.added', { name }) : t('workspaces.secrets.replaced', { name }))}
      />
    </>
  )
}

const SECRET_FIELDS = ['name', 'value'] as const

/** What the service would refuse of the form, said before anything is sent. */
function problemsOf(name: string, value: string, t: Translate): Record<string, string> {
  const problems: Record<string, string> = {}
  if (name === '') problems.name = t('api.required')
  else if (!SECRET_NAME_PATTERN.test(name)) problems.name = t('api.pattern.secretName')
  if (value === '') problems.value = t('api.required')
  else if (bytesOf(value) > MAX_SECRET_VALUE_BYTES) problems.value = t('api.tooManyBytes', { limit: new Intl.NumberFormat(t('api.numberLocale')).format(MAX_SECRET_VALUE_BYTES) })
  return problems
}

/** A new secret, or a new value for `replacing` (its name stays). The value field is a password's: what is typed is never shown, nor ever filled back. */
function SecretForm({
  replacing,
  taken,
  onCancel,
  onSaved,
}: {
  replacing: Secret | undefined
  taken: ReadonlySet<string> | undefined
  onCancel(): void
  onSaved(name: string, created: boolean): void
}) {
  const t = useT()
  const [name, setName] = useState(replacing?.name ?? '')
  const [value, setValue] = useState('')
  const [checked, setChecked] = useState<Record<string, string>>({})
  const submit = useSubmit()
  const errors = { ...useFormFieldErrors(submit.error, SECRET_FIELDS), ...checked }
  const headingId = replacing ? 'replace-secret' : 'new-secret'
  const used = bytesOf(value)
  const format = new Intl.NumberFormat(t('api.numberLocale'))

  const save = async () => {
    const problems = problemsOf(name, value, t)
    setChecked(problems)
    if (Object.keys(problems).length > 0) return
    const result = await api.PUT('/v1/secrets/{name}', { params: { path: { name } }, body: { value } })
    await unwrap(Promise.resolve(result))
    setValue('')
    if (!replacing) setName('')
    onSaved(name, result.response.status === 201)
  }

  const nameHint = replacing
    ? t('workspaces.secrets.fixed')
    : taken?.has(name)
      ? t('workspaces.secrets.exists', { name })
      : t('workspaces.secrets.nameHint', { use: reference(SECRET_NAME_PATTERN.test(name) ? name : t('workspaces.secrets.placeholder')) })

  return (
    <CardForm
      headingId={headingId}
      heading={replacing ? t('workspaces.secrets.replacing', { name: replacing.name }) : t('workspaces.secrets.new')}
      submit={submit}
      errors={errors}
      onSubmit={save}
      onCancel={replacing ? onCancel : undefined}
    >
      <div className="form-row">
        <Field label={t('common.name')} hint={nameHint} error={errors.name}>
          {(props) => (
            <input
              {...props}
              className="mono"
              autoComplete="off"
              spellCheck={false}
              readOnly={!!replacing}
              value={name}
              onChange={(event) => {
                setName(event.target.value)
                setChecked(({ name: _name, ...rest }) => rest)
              }}
            />
          )}
        </Field>
        <Field
          label={t('workspaces.secrets.value')}
          hint={
            <>
              {t('workspaces.secrets.valueHint')}{' '}
              <span className={used > MAX_SECRET_VALUE_BYTES ? 'length-counter full' : 'length-counter'} data-testid="secret-bytes">
                {t('workspaces.secrets.bytes', { used: format.format(used), max: format.format(MAX_SECRET_VALUE_BYTES) })}
              </span>
            </>
          }
          error={errors.value}
        >
          {(props) => (
            <input
              {...props}
              type="password"
              autoComplete="new-password"
              spellCheck={false}
              autoFocus={!!replacing}
              value={value}
              onChange={(event) => {
                setValue(event.target.value)
                setChecked(({ value: _value, ...rest }) => rest)
              }}
            />
          )}
        </Field>
      </div>
    </CardForm>
  )
}
