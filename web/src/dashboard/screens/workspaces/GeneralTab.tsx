import { useState } from 'react'
import { useActingWorkspace } from '../../acting-workspace'
import { api, unwrap } from '../../api'
import { CopyButton, DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import type { WorkspaceDetail } from './api-types'
import { CardForm, useFormFieldErrors, useSubmit } from './forms'
import { WorkspaceFields } from './WorkspaceFields'

/** A workspace's details; an organization-admin key's session renames it and changes its time zone. */
export function GeneralTab({ workspace, onChanged }: { workspace: WorkspaceDetail; onChanged(): void }) {
  const t = useT()
  const info = useSignedIn()
  return (
    <>
      <div className="card">
        <h2>{t('workspaces.general.title')}</h2>
        <dl className="ws-details">
          <dt>{t('common.name')}</dt>
          <dd>{workspace.name}</dd>
          <dt>{t('common.id')}</dt>
          <dd>
            <span className="mono">{workspace.id}</span> <CopyButton value={workspace.id} label={t('common.id')} />
          </dd>
          <dt>{t('common.createdAt')}</dt>
          <dd>
            <DateTime value={workspace.createdAt} />
          </dd>
          <dt>{t('workspaces.timezone')}</dt>
          <dd>{workspace.timezone ?? t('workspaces.general.utc')}</dd>
          <dt>{t('workspaces.general.signedInKey')}</dt>
          <dd>{workspace.id === info.workspaceId ? t('workspaces.general.keyHere') : t('workspaces.general.keyElsewhere')}</dd>
        </dl>
      </div>
      {info.role === 'organization-admin' && <ChangeWorkspace workspace={workspace} onChanged={onChanged} />}
    </>
  )
}

function ChangeWorkspace({ workspace, onChanged }: { workspace: WorkspaceDetail; onChanged(): void }) {
  const t = useT()
  const { workspaces } = useActingWorkspace()
  const [name, setName] = useState(workspace.name)
  const [timezone, setTimezone] = useState(workspace.timezone ?? '')
  const [saved, setSaved] = useState(false)
  const submit = useSubmit()
  const errors = useFormFieldErrors(submit.error, ['name', 'timezone'])
  const save = async () => {
    setSaved(false)
    await unwrap(api.PATCH('/v1/workspaces/{id}', { params: { path: { id: workspace.id } }, body: { name, timezone: timezone.trim() || null } }))
    setSaved(true)
    workspaces.reload()
    onChanged()
  }
  return (
    <CardForm headingId="change-workspace" heading={t('workspaces.general.change')} level={2} submit={submit} errors={errors} onSubmit={save} onCancel={() => {
      setName(workspace.name)
      setTimezone(workspace.timezone ?? '')
    }}>
      <WorkspaceFields
        idPrefix="ws-change"
        name={name}
        timezone={timezone}
        timezoneHint={t('workspaces.general.timezoneHint')}
        errors={errors}
        onName={(changed) => {
          setSaved(false)
          setName(changed)
        }}
        onTimezone={(changed) => {
          setSaved(false)
          setTimezone(changed)
        }}
      />
      {saved && <p role="status">{t('workspaces.general.saved')}</p>}
    </CardForm>
  )
}
