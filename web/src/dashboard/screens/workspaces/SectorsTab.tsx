import { useState } from 'react'
import { api, createdId, unwrap } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime, Field } from '../../components/ui'
import { useT } from '../../i18n'
import { CardForm, DeleteAction, useFormFieldErrors, SubmitError, useSubmit } from './forms'
import type { Sector } from './api-types'

/** The workspace's sectors (a flow's transfer targets): listed, created, renamed, deleted. */
export function SectorsTab() {
  const t = useT()
  const sectors = usePagedList((paging) => unwrap(api.GET('/v1/sectors', { params: { query: paging } })), [])
  const [editing, setEditing] = useState<Sector>()
  const [announced, setAnnounced] = useState('')

  const columns: Column<Sector>[] = [
    { header: t('common.name'), cell: (sector) => sector.name },
    { header: t('common.updatedAt'), cell: (sector) => <DateTime value={sector.updatedAt} /> },
    {
      header: t('common.actions'),
      className: 'ws-actions',
      cell: (sector) => (
        <>
          <button type="button" className="secondary" aria-label={t('workspaces.sectors.renameOf', { name: sector.name })} onClick={() => setEditing(sector)}>
            {t('workspaces.sectors.rename')}
          </button>
          <DeleteAction
            name={sector.name}
            question={t('workspaces.sectors.confirmDelete', { name: sector.name })}
            onDelete={async () => {
              await unwrap(api.DELETE('/v1/sectors/{id}', { params: { path: { id: sector.id } } }))
              setAnnounced(t('workspaces.sectors.deleted', { name: sector.name }))
              sectors.reload()
            }}
          />
        </>
      ),
    },
  ]

  const renaming = editing && {
    key: editing.id,
    content: (
      <RenameSector
        sector={editing}
        onDone={(renamed) => {
          setEditing(undefined)
          if (renamed) {
            setAnnounced(t('workspaces.sectors.renamed', { name: renamed }))
            sectors.reload()
          }
        }}
      />
    ),
  }

  return (
    <>
      <h2>{t('workspaces.sectors.title')}</h2>
      <p className="hint">{t('workspaces.sectors.intro')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      <ListView list={sectors} empty={t('workspaces.sectors.empty')} rowKey={(sector) => sector.id} columns={columns} editing={renaming} />
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
  const errors = useFormFieldErrors(submit.error, ['name'])
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
  const errors = useFormFieldErrors(submit.error, ['name'])
  const create = async () => {
    await createdId(api.POST('/v1/sectors', { body: { name } }))
    onCreated(name)
    setName('')
  }

  return (
    <CardForm headingId="new-sector" heading={t('workspaces.sectors.new')} submit={submit} errors={errors} onSubmit={create}>
      <Field label={t('common.name')} error={errors.name}>
        {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
      </Field>
    </CardForm>
  )
}
