import { CopyButton, DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import type { Workspace } from './api-types'

/** What the API tells about a workspace; it offers no change to one, so nothing here is editable. */
export function GeneralTab({ workspace }: { workspace: Workspace }) {
  const t = useT()
  const info = useSignedIn()
  return (
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
        <dd>{t('workspaces.general.timezoneHidden')}</dd>
        <dt>{t('workspaces.general.signedInKey')}</dt>
        <dd>{workspace.id === info.workspaceId ? t('workspaces.general.keyHere') : t('workspaces.general.keyElsewhere')}</dd>
      </dl>
      <p className="hint">{t('workspaces.general.readOnly')}</p>
    </div>
  )
}
