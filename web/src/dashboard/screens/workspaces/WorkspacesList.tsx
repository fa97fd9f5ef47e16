import { useState } from 'react'
import { Link } from 'wouter'
import { api, createdId, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, PageHeader, Pager } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { PAGE_SIZES, pagingOf, useQueryParams } from '../../components/address'
import { fieldErrors, SubmitError, useSubmit } from './forms'

/** The organization's workspaces (a workspace key: its own), and, for an admin key, a new one. */
export function WorkspacesList() {
  const t = useT()
  const info = useSignedIn()
  const [params, setParams] = useQueryParams()
  const { page, size } = pagingOf(params)
  const workspaces = useAsync(() => unwrap(api.GET('/v1/workspaces', { params: { query: { page, size } } })), [page, size])
  const [created, setCreated] = useState<{ id: string; name: string }>()

  return (
    <section>
      <PageHeader title={t('workspaces.title')} />
      {info.role === 'workspace' && <p className="notice">{t('workspaces.onlyOwn')}</p>}
      <div className="filters">
        <label className="compact">
          <span>{t('pager.size')}</span>
          <select value={size} onChange={(event) => setParams({ size: event.target.value, page: undefined })}>
            {PAGE_SIZES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div role="status">
        {created && (
          <p className="notice ok">
            {t('workspaces.created', { name: created.name })} <Link href={`/${created.id}/general`}>{t('workspaces.open', { name: created.name })}</Link>
          </p>
        )}
      </div>
      {workspaces.error && <ErrorNotice error={workspaces.error} onRetry={workspaces.reload} />}
      {!workspaces.data && !workspaces.error && <Loading />}
      {workspaces.data && workspaces.data.content.length === 0 && <Empty />}
      {workspaces.data && workspaces.data.content.length > 0 && (
        <>
          <table className="ws-table">
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('common.id')}</th>
                <th scope="col">{t('common.createdAt')}</th>
              </tr>
            </thead>
            <tbody>
              {workspaces.data.content.map((workspace) => (
                <tr key={workspace.id}>
                  <td>
                    <Link href={`/${workspace.id}/general`}>{workspace.name}</Link>{' '}
                    {workspace.id === info.workspaceId && <span className="badge">{t('workspaces.signedInHere')}</span>}
                  </td>
                  <td className="mono">{workspace.id}</td>
                  <td>
                    <DateTime value={workspace.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={workspaces.data.totalPages} totalElements={workspaces.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
      {info.role === 'organization-admin' && (
        <NewWorkspace
          onCreated={(workspace) => {
            setCreated(workspace)
            workspaces.reload()
          }}
        />
      )}
    </section>
  )
}

const ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []

function NewWorkspace({ onCreated }: { onCreated(workspace: { id: string; name: string }): void }) {
  const t = useT()
  const [name, setName] = useState('')
  const [timezone, setTimezone] = useState('')
  const submit = useSubmit()
  const errors = fieldErrors(submit.error, ['name', 'timezone'])
  return (
    <form
      className="card ws-form"
      noValidate
      aria-labelledby="new-workspace"
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(async () => {
          const body = timezone.trim() ? { name, timezone: timezone.trim() } : { name }
          const id = await createdId(api.POST('/v1/workspaces', { body }))
          onCreated({ id, name })
          setName('')
          setTimezone('')
        })
      }}
    >
      <h2 id="new-workspace">{t('workspaces.new')}</h2>
      <div className="form-row">
        <Field label={t('common.name')} error={errors.name}>
          {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label={t('workspaces.timezone')} hint={t('workspaces.timezoneHint')} error={errors.timezone}>
          {(props) => <input {...props} list="ws-zones" value={timezone} placeholder="America/Sao_Paulo" onChange={(event) => setTimezone(event.target.value)} />}
        </Field>
        <datalist id="ws-zones">
          {ZONES.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
      </div>
      <SubmitError error={submit.error} fields={errors} />
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? t('common.creating') : t('common.create')}
      </button>
    </form>
  )
}
