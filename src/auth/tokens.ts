import { randomUUID } from 'node:crypto'
import { jwtVerify, SignJWT } from 'jose'

/** What an editor token grants: the workspace of one OAuth client. */
export interface EditorGrant {
  clientId: string
  organizationId: string
  workspaceId: string
}

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60
export const EDITOR_AUDIENCE = 'flowd-editor'
export const TOKEN_ISSUER = 'flowd'
// RFC 9068: an access token says so in its header, so no other JWT signed with the key passes for one.
const ACCESS_TOKEN_TYPE = 'at+jwt'
const ALGORITHM = 'HS256'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value)

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** A signed access token for `grant`, valid {@link ACCESS_TOKEN_TTL_SECONDS} from `now`. */
export async function signAccessToken(key: Uint8Array, grant: EditorGrant, now: Date): Promise<string> {
  const issuedAt = seconds(now)
  return new SignJWT({ wid: grant.workspaceId, oid: grant.organizationId })
    .setProtectedHeader({ alg: ALGORITHM, typ: ACCESS_TOKEN_TYPE })
    .setSubject(grant.clientId)
    .setAudience(EDITOR_AUDIENCE)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ACCESS_TOKEN_TTL_SECONDS)
    .setJti(randomUUID())
    .sign(key)
}

/** The grant of a valid access token at `now`; undefined when it is malformed, tampered with, expired or meant for another audience. */
export async function verifyAccessToken(key: Uint8Array, token: string, now: Date): Promise<EditorGrant | undefined> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      typ: ACCESS_TOKEN_TYPE,
      audience: EDITOR_AUDIENCE,
      issuer: TOKEN_ISSUER,
      currentDate: now,
      requiredClaims: ['sub', 'iat', 'exp', 'jti'],
    })
    const { sub, wid, oid } = payload
    if (!isUuid(sub) || !isUuid(wid) || !isUuid(oid)) return undefined
    return { clientId: sub, workspaceId: wid, organizationId: oid }
  } catch {
    return undefined
  }
}
