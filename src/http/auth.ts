import type { FastifyReply, FastifyRequest } from 'fastify'
import { hashApiKey, API_KEY_PREFIX } from '../commands/api-keys.js'
import { UnauthorizedError } from '../errors.js'
import { findActiveApiKeyByHash, type ApiKeyPrincipal } from '../projections/api-keys.js'
import type { DbOrTrx } from '../store/database.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key's identity; set on every `/v1` route. */
    principal: ApiKeyPrincipal
  }
}

/**
 * Looks API keys up by their SHA-256 and remembers found keys for `ttlMs`, so a revoked key stops
 * working within that time. Unknown keys are not remembered: a key issued a moment ago works at once.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { principal: ApiKeyPrincipal; expiresAt: number }>()

  constructor(
    private readonly db: DbOrTrx,
    private readonly ttlMs = 5000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticate(key: string): Promise<ApiKeyPrincipal | undefined> {
    if (!key.startsWith(API_KEY_PREFIX)) return undefined
    const hash = hashApiKey(key)
    const cached = this.cache.get(hash)
    if (cached && cached.expiresAt > Date.now()) return cached.principal
    this.cache.delete(hash)
    const principal = await findActiveApiKeyByHash(this.db, hash)
    if (principal) {
      if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!)
      this.cache.set(hash, { principal, expiresAt: Date.now() + this.ttlMs })
    }
    return principal
  }
}

export const requireApiKey =
  (authenticator: ApiKeyAuthenticator) =>
  async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const key = request.headers['x-api-key']
    if (typeof key !== 'string' || key === '') throw new UnauthorizedError('Missing X-Api-Key header')
    const principal = await authenticator.authenticate(key)
    if (!principal) throw new UnauthorizedError('Invalid API key')
    request.principal = principal
  }
