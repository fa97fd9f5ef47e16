import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { API_KEY_PREFIX, hashApiKey } from '../commands/api-keys.js'
import type { ApiKeyPrincipal } from '../projections/api-keys.js'
import type { DbOrTrx } from '../store/database.js'
import { hashOpaqueToken, newOpaqueToken } from './opaque.js'

/** A dashboard session lasts this long from sign-in, whatever is done in it; then the person signs in again. */
export const DASHBOARD_SESSION_TTL_SECONDS = 8 * 3600
/** A printed sign-in link works once, within this time. */
export const SIGN_IN_LINK_TTL_SECONDS = 24 * 3600
/** The cookie that carries the session token: `HttpOnly`, `SameSite=Strict`, `Secure` over HTTPS. */
export const SESSION_COOKIE = 'flowd_session'
/** The header a dashboard request that changes anything must carry (the session's CSRF token). */
export const CSRF_HEADER = 'x-csrf-token'
// Expired rows are deleted this long after their end (a slower clock elsewhere never loses a live one).
const PRUNE_AFTER_MS = 60 * 60 * 1000

/** A live dashboard session: the API key it signed in with, as that key stands now. */
export interface DashboardSession {
  id: string
  principal: ApiKeyPrincipal
  expiresAt: Date
}

/**
 * The CSRF token of a session: an HMAC of its cookie's token, so nothing more is stored and only a
 * page that was given it (by sign-in or `GET /auth/session`, both same-origin) can send it.
 */
export const csrfTokenOf = (sessionToken: string): string => createHmac('sha256', sessionToken).update('flowd-dashboard-csrf').digest('base64url')

export function csrfTokenMatches(sessionToken: string, presented: string | undefined): boolean {
  if (!presented) return false
  const expected = Buffer.from(csrfTokenOf(sessionToken))
  const given = Buffer.from(presented)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

/** A one-time sign-in link's token for the API key with this hash; only its hash is stored. */
export async function issueSignInLink(db: DbOrTrx, apiKeyHash: string, now: Date): Promise<string> {
  const token = newOpaqueToken()
  await db
    .insertInto('dashboard_sign_in_links')
    .values({ token_hash: hashOpaqueToken(token), api_key_hash: apiKeyHash, created_at: now, expires_at: new Date(now.getTime() + SIGN_IN_LINK_TTL_SECONDS * 1000) })
    .execute()
  await db.deleteFrom('dashboard_sign_in_links').where('expires_at', '<', new Date(now.getTime() - PRUNE_AFTER_MS)).execute()
  return token
}

/** The dashboard page that signs in with a link's token (in the fragment: never sent to a server or a log). */
export const dashboardSignInUrl = (serviceAddress: string, token: string): string => `${serviceAddress.replace(/\/+$/, '')}/dashboard/sign-in#token=${token}`

/** The hash of a well-formed API key, for a session; undefined for anything that cannot be one. */
export const apiKeyHashOf = (apiKey: string): string | undefined => (apiKey.startsWith(API_KEY_PREFIX) && apiKey.length < 200 ? hashApiKey(apiKey) : undefined)

/** Uses up a sign-in link; answers the hash of its API key, or undefined when unknown, used or expired. */
export async function consumeSignInLink(db: DbOrTrx, token: string, now: Date): Promise<string | undefined> {
  const row = await db
    .updateTable('dashboard_sign_in_links')
    .set({ used_at: now })
    .where('token_hash', '=', hashOpaqueToken(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('api_key_hash')
    .executeTakeFirst()
  return row?.api_key_hash
}

/** Starts a session for the API key with this hash; answers the cookie's token (only its hash is stored). */
export async function startDashboardSession(db: DbOrTrx, apiKeyHash: string, now: Date): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = newOpaqueToken()
  const id = randomUUID()
  const expiresAt = new Date(now.getTime() + DASHBOARD_SESSION_TTL_SECONDS * 1000)
  await db.insertInto('dashboard_sessions').values({ id, token_hash: hashOpaqueToken(token), api_key_hash: apiKeyHash, created_at: now, expires_at: expiresAt }).execute()
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<', new Date(now.getTime() - PRUNE_AFTER_MS)).execute()
  return { id, token, expiresAt }
}

const liveSessions = (db: DbOrTrx, now: Date) =>
  db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('api_keys as k', 'k.key_hash', 's.api_key_hash')
    .select(['s.id', 's.expires_at', 'k.id as api_key_id', 'k.organization_id', 'k.workspace_id', 'k.role', 'k.callback_url'])
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('k.revoked_at', 'is', null)

type LiveRow = { id: string; expires_at: Date | string; api_key_id: string; organization_id: string; workspace_id: string; role: string; callback_url: string | null }

const sessionOf = (row: LiveRow): DashboardSession => ({
  id: row.id,
  expiresAt: new Date(row.expires_at),
  principal: {
    apiKeyId: row.api_key_id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    role: row.role as ApiKeyPrincipal['role'],
    callbackUrl: row.callback_url,
  },
})

/** The live session of a cookie's token: not signed out, not expired, its API key not revoked. */
export async function findDashboardSession(db: DbOrTrx, token: string, now: Date): Promise<DashboardSession | undefined> {
  const row = await liveSessions(db, now).where('s.token_hash', '=', hashOpaqueToken(token)).executeTakeFirst()
  return row && sessionOf(row)
}

/** The live session with this id (an editor signed in by the dashboard lives as long as it). */
export async function findDashboardSessionById(db: DbOrTrx, id: string, now: Date): Promise<DashboardSession | undefined> {
  const row = await liveSessions(db, now).where('s.id', '=', id).executeTakeFirst()
  return row && sessionOf(row)
}

/** Sign-out: the session ends for every tab and every editor it signed in. */
export async function endDashboardSession(db: DbOrTrx, token: string, now: Date): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ ended_at: now }).where('token_hash', '=', hashOpaqueToken(token)).where('ended_at', 'is', null).execute()
}
