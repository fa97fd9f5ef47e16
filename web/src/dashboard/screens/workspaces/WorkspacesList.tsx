import { useState } from 'react'
import { Link } from 'wouter'
import { api, createdId, unwrap } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime, PageHeader } from '../../components/ui'
import { useT } from '../../i18n'
import { useActingWorkspace } from '../../acting-workspace'
import { useSignedIn } from '../../session'
import { PAGE_SIZES, pagingOf, useQueryParams } from '../../components/address'
import type { Workspace } from './api-types'
import { CardForm, useFormFieldErrors, useSubmit } from './forms'
import { WorkspaceFields } from './WorkspaceFields'

/** The organization's workspaces (a workspace key: its own), and, for an admin key, a new one. */
export function WorkspacesList() {
  const t = useT()
  const info = useSignedIn()
  const [params, setParams] = useQueryParams()
  const { size } = pagingOf(params)
  const workspaces = usePagedList((paging) => unwrap(api.GET('/v1/workspaces', { params: { query: paging } })), [])
  const [created, setCreated] = useState<{ id: string; name: string }>()
  const switcher = useActingWorkspace().workspaces

  const columns: Column<Workspace>[] = [
    {
      header: t('common.name'),
      cell: (workspace) => (
        <>
          <Link href={`/${workspace.id}/general`}>{workspace.name}</Link>{' '}
          {workspace.id === info.workspaceId && <span className="badge">{t('workspaces.signedInHere')}</span>}
        </>
      ),
    },
    { header: t('common.id'), className: 'mono', cell: (workspace) => workspace.id },
    { header: t('common.createdAt'), cell: (workspace) => <DateTime value={workspace.createdAt} /> },
  ]

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
      <ListView list={workspaces} rowKey={(workspace) => workspace.id} columns={columns} />
      {info.role === 'organization-admin' && (
        <NewWorkspace
          onCreated={(workspace) => {
            setCreated(workspace)
            workspaces.reload()
            switcher.reload()
          }}
        />
      )}
    </section>
  )
}

function NewWorkspace({ onCreated }: { onCreated(workspace: { id: string; name: string }): void }) {
  const t = useT()
  const [name, setName] = useState('')
  const [timezone, setTimezone] = useState('')
  const submit = useSubmit()
  const errors = useFormFieldErrors(submit.error, ['name', 'timezone'])
  const create = async () => {
    const body = timezone.trim() ? { name, timezone: timezone.trim() } : { name }
    const id = await createdId(api.POST('/v1/workspaces', { body }))
    onCreated({ id, name })
    setName('')
    setTimezone('')
  }

  return (
    <CardForm headingId="new-workspace" heading={t('workspaces.new')} level={2} submit={submit} errors={errors} onSubmit={create}>
      <WorkspaceFields idPrefix="ws-new" name={name} timezone={timezone} timezoneHint={t('workspaces.timezoneHint')} errors={errors} onName={setName} onTimezone={setTimezone} />
    </CardForm>
  )
}
