import { randomUUID } from 'node:crypto'
import type { Db, DbOrTrx } from '../store/database.js'
import { liveGrant } from './live-grant.js'
import { hashOpaqueToken, newOpaqueToken } from './opaque.js'
import type { EditorGrant } from './tokens.js'

/** A refresh token is good for one use within this time; each use gives a new one. */
export const REFRESH_TOKEN_TTL_SECONDS = 12 * 60 * 60
/** However often it is refreshed, a family ends this long after its exchange: then the host page issues a new OTT. */
export const TOKEN_FAMILY_TTL_SECONDS = 24 * 60 * 60

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000)
const earlier = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b)

async function addRefreshToken(trx: DbOrTrx, familyId: string, now: Date, familyEnd: Date): Promise<string> {
  const token = newOpaqueToken()
  await trx
    .insertInto('editor_refresh_tokens')
    .values({ token_hash: hashOpaqueToken(token), family_id: familyId, created_at: now, expires_at: earlier(later(now, REFRESH_TOKEN_TTL_SECONDS), familyEnd) })
    .execute()
  return token
}

/** Starts the token family of an exchanged OTT and answers its first refresh token. */
export async function startTokenFamily(trx: DbOrTrx, grant: EditorGrant, now: Date): Promise<string> {
  // Families that have ended hold nothing usable; their tokens go with them (on delete cascade).
  // An hour's grace keeps a family that a process with a slower clock still honours.
  await trx.deleteFrom('editor_token_families').where('expires_at', '<', later(now, -3600)).execute()
  const familyId = randomUUID()
  const familyEnd = later(now, TOKEN_FAMILY_TTL_SECONDS)
  await trx
    .insertInto('editor_token_families')
    .values({ id: familyId, client_id: grant.clientId, organization_id: grant.organizationId, workspace_id: grant.workspaceId, created_at: now, expires_at: familyEnd })
    .execute()
  return addRefreshToken(trx, familyId, now, familyEnd)
}

export type Rotation =
  | { outcome: 'rotated'; grant: EditorGrant; refreshToken: string }
  /** Unknown, expired, of an ended or revoked family, or of a revoked client. */
  | { outcome: 'rejected' }
  /** A token already rotated was presented again: someone else may hold it, so its family is revoked. */
  | { outcome: 'reused' }

/**
 * Uses up a refresh token and answers the next one of its family. The first use wins (one
 * conditional update); any later use of the same token revokes the whole family, including the
 * token the first use handed out. The revocation commits even though the call is refused.
 */
export async function rotateRefreshToken(db: Db, token: string, now: Date): Promise<Rotation> {
  const tokenHash = hashOpaqueToken(token)
  return db.transaction().execute(async (trx): Promise<Rotation> => {
    const used = await trx
      .updateTable('editor_refresh_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('family_id')
      .executeTakeFirst()
    if (!used) {
      const known = await trx.selectFrom('editor_refresh_tokens').select(['family_id', 'used_at']).where('token_hash', '=', tokenHash).executeTakeFirst()
      if (!known?.used_at) return { outcome: 'rejected' }
      await revokeFamily(trx, known.family_id, now)
      return { outcome: 'reused' }
    }
    const family = await trx
      .selectFrom('editor_token_families')
      .select(['id', 'client_id', 'organization_id', 'workspace_id', 'expires_at'])
      .where('id', '=', used.family_id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    if (!family) return { outcome: 'rejected' }
    const grant = { clientId: family.client_id, organizationId: family.organization_id, workspaceId: family.workspace_id }
    if (!(await liveGrant(trx, grant, now))) {
      await revokeFamily(trx, family.id, now)
      return { outcome: 'rejected' }
    }
    const refreshToken = await addRefreshToken(trx, family.id, now, new Date(family.expires_at))
    return { outcome: 'rotated', grant, refreshToken }
  })
}

const revokeFamily = (trx: DbOrTrx, familyId: string, now: Date) =>
  trx.updateTable('editor_token_families').set({ revoked_at: now }).where('id', '=', familyId).where('revoked_at', 'is', null).execute()
