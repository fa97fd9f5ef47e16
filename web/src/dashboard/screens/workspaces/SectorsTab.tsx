import { useState } from 'react'
import { api, createdId, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, Pager } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { pagingOf, useQueryParams } from '../../components/address'
import { ConfirmAction, fieldErrors, SubmitError, useSubmit } from './forms'
import type { Sector, Workspace } from './api-types'
import { OtherWorkspaceNotice } from './OtherWorkspace'

/** The workspace's sectors (a flow's transfer targets): listed, created, renamed, deleted. */
export function SectorsTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const info = useSignedIn()
  if (workspace.id !== info.workspaceId) {
    return (
      <>
        <h2>{t('workspaces.sectors.title')}</h2>
        <OtherWorkspaceNotice workspace={workspace} message={t('workspaces.other.sectors', { name: workspace.name })} />
      </>
    )
  }
  return <OwnSectors />
}

function OwnSectors() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const { page, size } = pagingOf(params)
  const sectors = useAsync(() => unwrap(api.GET('/v1/sectors', { params: { query: { page, size } } })), [page, size])
  const [editing, setEditing] = useState<string>()
  const [announced, setAnnounced] = useState('')

  return (
    <>
      <h2>{t('workspaces.sectors.title')}</h2>
      <p className="hint">{t('workspaces.sectors.intro')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      {sectors.error && <ErrorNotice error={sectors.error} onRetry={sectors.reload} />}
      {!sectors.data && !sectors.error && <Loading />}
      {sectors.data && sectors.data.content.length === 0 && <Empty>{t('workspaces.sectors.empty')}</Empty>}
      {sectors.data && sectors.data.content.length > 0 && (
        <>
          <table className="ws-table">
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('common.updatedAt')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {sectors.data.content.map((sector) => (
                <tr key={sector.id}>
                  {editing === sector.id ? (
                    <td colSpan={3}>
                      <RenameSector
                        sector={sector}
                        onDone={(renamed) => {
                          setEditing(undefined)
                          if (renamed) {
                            setAnnounced(t('workspaces.sectors.renamed', { name: renamed }))
                            sectors.reload()
                          }
                        }}
                      />
                    </td>
                  ) : (
                    <>
                      <td>{sector.name}</td>
                      <td>
                        <DateTime value={sector.updatedAt} />
                      </td>
                      <td className="ws-actions">
                        <button type="button" className="secondary" aria-label={t('workspaces.sectors.renameOf', { name: sector.name })} onClick={() => setEditing(sector.id)}>
                          {t('workspaces.sectors.rename')}
                        </button>
                        <ConfirmAction
                          label={t('workspaces.delete')}
                          subject={sector.name}
                          question={t('workspaces.sectors.confirmDelete', { name: sector.name })}
                          onConfirm={async () => {
                            await unwrap(api.DELETE('/v1/sectors/{id}', { params: { path: { id: sector.id } } }))
                            setAnnounced(t('workspaces.sectors.deleted', { name: sector.name }))
                            sectors.reload()
                          }}
                        />
                      </td>
                    </>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={sectors.data.totalPages} totalElements={sectors.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
      <NewSector
        onCreated={(name) => {
          setAnnounced(t('workspaces.sectors.created', { name }))
          sectors.reload()
        }}
      />
    </>
  )
}

function RenameSector({ sector, onDone }: { sector: Sector; onDone(renamed?: string): void }) {
  const t = useT()
  const [name, setName] = useState(sector.name)
  const submit = useSubmit()
  const errors = fieldErrors(submit.error, ['name'], 'name')
  return (
    <form
      className="form-row"
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(async () => {
          await unwrap(api.PATCH('/v1/sectors/{id}', { params: { path: { id: sector.id } }, body: { name } }))
          onDone(name)
        })
      }}
    >
      <Field label={t('workspaces.sectors.newName', { name: sector.name })} error={errors.name}>
        {(props) => <input {...props} autoFocus value={name} onChange={(event) => setName(event.target.value)} />}
      </Field>
      <div className="ws-actions">
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? t('common.saving') : t('common.save')}
        </button>
        <button type="button" className="secondary" onClick={() => onDone()}>
          {t('common.cancel')}
        </button>
      </div>
      <SubmitError error={submit.error} fields={errors} />
    </form>
  )
}

function NewSector({ onCreated }: { onCreated(name: string): void }) {
  const t = useT()
  const [name, setName] = useState('')
  const submit = useSubmit()
  const errors = fieldErrors(submit.error, ['name'], 'name')
  return (
    <form
      className="card ws-form"
      aria-labelledby="new-sector"
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(async () => {
          await createdId(api.POST('/v1/sectors', { body: { name } }))
          onCreated(name)
          setName('')
        })
      }}
    >
      <h3 id="new-sector">{t('workspaces.sectors.new')}</h3>
      <Field label={t('common.name')} error={errors.name}>
        {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
      </Field>
      <SubmitError error={submit.error} fields={errors} />
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? t('common.creating') : t('common.create')}
      </button>
    </form>
  )
}
