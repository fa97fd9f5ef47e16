import { Link } from 'wouter'
import { useT } from '../../i18n'
import type { Workspace } from './api-types'

/**
 * Why a tab cannot act on `workspace`: the API makes sectors, variables and OAuth clients in the
 * signed-in key's own workspace only. Points to the way there: a key of this workspace.
 */
export function OtherWorkspaceNotice({ workspace, message }: { workspace: Workspace; message: string }) {
  const t = useT()
  return (
    <div className="notice warn ws-other">
      <p>{message}</p>
      <p>
        <Link href={`/${workspace.id}/api-keys`}>{t('workspaces.other.how', { name: workspace.name })}</Link>
      </p>
    </div>
  )
}

/** A tab of what the API keeps in the signed-in key's own workspace only, opened on another workspace. */
export function OtherWorkspaceTab({ tab, workspace }: { tab: 'sectors' | 'variables'; workspace: Workspace }) {
  const t = useT()
  return (
    <>
      <h2>{t(`workspaces.${tab}.title`)}</h2>
      <OtherWorkspaceNotice workspace={workspace} message={t(`workspaces.other.${tab}`, { name: workspace.name })} />
    </>
  )
}
