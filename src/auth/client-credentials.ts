import { randomBytes } from 'node:crypto'
import { hashClientSecret, verifyClientSecret, type ScryptCost } from '../commands/oauth-clients.js'
import { findOAuthClientCredentials } from '../projections/oauth-clients.js'
import type { DbOrTrx } from '../store/database.js'
import type { EditorGrant } from './tokens.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i

/** `Authorization: Basic base64(clientId:clientSecret)` (RFC 7617); undefined for anything else. */
export function parseBasicAuthorization(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const encoded = header === undefined ? undefined : BASIC.exec(header)?.[1]
  if (encoded === undefined || encoded.length % 4 !== 0) return undefined
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0 || colon === decoded.length - 1) return undefined
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) }
}

const decoyHashes = new Map<string, Promise<string>>()
// A hash made with the same cost as real ones, of a secret nobody knows.
const decoy = (cost: ScryptCost | undefined) => {
  const key = cost ? `${cost.N}$${cost.r}$${cost.p}` : 'default'
  let hash = decoyHashes.get(key)
  if (!hash) decoyHashes.set(key, (hash = hashClientSecret(randomBytes(32).toString('base64url'), cost)))
  return hash
}

/**
 * The live OAuth client whose credentials the header carries; undefined for a malformed header,
 * an unknown or revoked client or a wrong secret alike. An unknown id is checked against a decoy
 * hash of the same cost (`secretCost`: the one new secrets are hashed with, production's by
 * default), so the answer time does not tell which client ids exist.
 */
export async function authenticateClient(db: DbOrTrx, authorization: string | undefined, secretCost?: ScryptCost): Promise<EditorGrant | undefined> {
  const credentials = parseBasicAuthorization(authorization)
  if (!credentials) return undefined
  const fallback = await decoy(secretCost)
  const client = UUID.test(credentials.clientId) ? await findOAuthClientCredentials(db, credentials.clientId.toLowerCase()) : undefined
  const valid = await verifyClientSecret(credentials.clientSecret, client?.secretHash ?? fallback)
  return client && valid ? { clientId: client.clientId, organizationId: client.organizationId, workspaceId: client.workspaceId } : undefined
}
