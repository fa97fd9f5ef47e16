import type { DbOrTrx } from '../store/database.js'
import { hashOpaqueToken, newOpaqueToken } from './opaque.js'
import type { EditorGrant } from './tokens.js'

export const OTT_TTL_SECONDS = 60
// Expired tokens are deleted this long after their end, so a clock a little behind another
// process's never loses a token that is still valid there.
const PRUNE_AFTER_MS = 60 * 60 * 1000

/** A one-time token for `grant`, valid {@link OTT_TTL_SECONDS} from `now`; only its hash is stored. */
export async function issueOneTimeToken(db: DbOrTrx, grant: EditorGrant, now: Date): Promise<string> {
  const ott = newOpaqueToken()
  await db
    .insertInto('editor_one_time_tokens')
    .values({
      token_hash: hashOpaqueToken(ott),
      client_id: grant.clientId,
      organization_id: grant.organizationId,
      workspace_id: grant.workspaceId,
      created_at: now,
      expires_at: new Date(now.getTime() + OTT_TTL_SECONDS * 1000),
    })
    .execute()
  await db.deleteFrom('editor_one_time_tokens').where('expires_at', '<', new Date(now.getTime() - PRUNE_AFTER_MS)).execute()
  return ott
}

/**
 * Uses up a one-time token and answers its grant; undefined when it is unknown, used or expired.
 * One conditional update does both, so of any number of concurrent exchanges exactly one wins
 * (the others wait for its row lock, then find `used_at` set).
 */
export async function consumeOneTimeToken(db: DbOrTrx, ott: string, now: Date): Promise<EditorGrant | undefined> {
  const row = await db
    .updateTable('editor_one_time_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hashOpaqueToken(ott))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['client_id', 'organization_id', 'workspace_id'])
    .executeTakeFirst()
  return row && { clientId: row.client_id, organizationId: row.organization_id, workspaceId: row.workspace_id }
}
