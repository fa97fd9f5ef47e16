import { findOAuthClientCredentials } from '../projections/oauth-clients.js'
import type { DbOrTrx } from '../store/database.js'
import { findDashboardSessionById } from './dashboard-sessions.js'
import type { EditorGrant } from './tokens.js'

/** An editor grant whose holder is live, and who acts through it (recorded in events' metadata). */
export interface LiveGrant extends EditorGrant {
  actor: string
}

/**
 * The grant as it stands at `now`, when its holder is live: the OAuth client it names, still
 * unrevoked and of that workspace; or the dashboard session it names (an editor the dashboard
 * signed in), still signed in with a key that reaches that workspace. Undefined otherwise.
 */
export async function liveGrant(db: DbOrTrx, grant: EditorGrant, now: Date): Promise<LiveGrant | undefined> {
  const client = await findOAuthClientCredentials(db, grant.clientId)
  if (client) {
    const same = client.organizationId === grant.organizationId && client.workspaceId === grant.workspaceId
    return same ? { ...grant, actor: `oauth-client:${grant.clientId}` } : undefined
  }
  const session = await findDashboardSessionById(db, grant.clientId, now)
  if (!session) return undefined
  const { organizationId, workspaceId, apiKeyId, role } = session.principal
  const reaches = organizationId === grant.organizationId && (role === 'organization-admin' || workspaceId === grant.workspaceId)
  return reaches ? { ...grant, actor: `apikey:${apiKeyId}` } : undefined
}
