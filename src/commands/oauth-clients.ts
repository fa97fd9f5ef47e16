import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { oauthClient, oauthClientStream } from '../domain/oauth-client.js'
import { newId } from '../ids.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'

export const CLIENT_SECRET_PREFIX = 'whcs_'

// 32 MiB of memory per hash: a stolen read model costs an attacker that much for every guess.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const
const KEY_LENGTH = 32
const SALT_BYTES = 16

/** scrypt's cost parameters; each hash records its own, so secrets hashed at any cost keep verifying. */
export interface ScryptCost {
  N: number
  r: number
  p: number
}

const scryptAsync = (secret: string, salt: Buffer, keyLength: number, { N, r, p }: ScryptCost): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(secret, salt, keyLength, { N, r, p, maxmem: 256 * N * r * p }, (error, key) => (error ? reject(error) : resolve(key))),
  )

/**
 * A self-describing slow hash, `scrypt$N$r$p$salt$hash` (base64url), of a client secret. `cost`
 * is the production one unless a test (and only a test) passes a cheaper one.
 */
export async function hashClientSecret(secret: string, cost: ScryptCost = SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const hash = await scryptAsync(secret, salt, KEY_LENGTH, cost)
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n > 1 && (n & (n - 1)) === 0

/**
 * Whether `secret` is the one `stored` was made from, compared in constant time. Parameters come
 * from the stored string, so hashes made with other costs keep verifying; costs outside sane
 * bounds or a malformed string never verify.
 */
export async function verifyClientSecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number]
  if (!isPowerOfTwo(N) || N > 2 ** 17 || !Number.isInteger(r) || r < 1 || r > 16 || !Number.isInteger(p) || p < 1 || p > 4) return false
  const salt = Buffer.from(parts[4]!, 'base64url')
  const expected = Buffer.from(parts[5]!, 'base64url')
  if (salt.length === 0 || expected.length < 16) return false
  const actual = await scryptAsync(secret, salt, expected.length, { N, r, p })
  return timingSafeEqual(actual, expected)
}

/** Where a command acts: the caller's workspace and organization. */
export interface ClientScope {
  workspaceId: string
  organizationId: string
}

export interface RegisteredOAuthClient {
  clientId: string
  /** Shown once: only its slow hash is kept. */
  clientSecret: string
  name: string
}

export async function registerOAuthClient(ctx: CommandContext, scope: ClientScope, input: { name: string }, secretCost?: ScryptCost): Promise<RegisteredOAuthClient> {
  const clientId = newId()
  const clientSecret = `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`
  const result = await handleCommand(ctx.store, oauthClient, oauthClientStream(clientId), {
    type: 'RegisterOAuthClient',
    data: { clientId, organizationId: scope.organizationId, workspaceId: scope.workspaceId, name: input.name, secretHash: await hashClientSecret(clientSecret, secretCost), now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId: scope.workspaceId })
  await awaitReadModels(ctx, result)
  return { clientId, clientSecret, name: input.name }
}

/** Revokes a client of the caller's workspace; its secret stops working at once. */
export async function revokeOAuthClient(ctx: CommandContext, scope: ClientScope, clientId: string): Promise<void> {
  const result = await handleCommand(ctx.store, oauthClient, oauthClientStream(clientId), {
    type: 'RevokeOAuthClient',
    data: { clientId, workspaceId: scope.workspaceId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}
