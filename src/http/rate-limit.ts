import rateLimit, { normalizeIP, type errorResponseBuilderContext } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { AppError } from '../errors.js'
import type { Principal } from './auth.js'
import { ErrorResponse } from './schemas.js'

// Budgets are counted by @fastify/rate-limit in this process's memory, in fixed one-minute windows:
// several api processes each allow the full budget (see docs/operations.md#rate-limits).
const WINDOW = '1 minute'
/** Callers remembered per budget; the least recently seen are forgotten first. */
const REMEMBERED_CALLERS = 10_000

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

/** Registers the limiter; it applies nowhere until `limitApiCalls` or `limitAuthEndpoints` says where. */
export async function registerRateLimiting(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW,
    cache: REMEMBERED_CALLERS,
    // The plugin's own error is answered by the app's error handler, in the spec's shape.
    errorResponseBuilder: (_request: FastifyRequest, context: errorResponseBuilderContext) =>
      new AppError(429, `Rate limit exceeded: ${context.max} requests a minute; retry in ${context.after}`),
  })
}

const addressKey = (request: FastifyRequest) => `address:${normalizeIP(request.ip)}`

const callerKey = (principal: Principal) => (principal.kind === 'api-key' ? `api-key:${principal.apiKeyId}` : `oauth-client:${principal.clientId}`)

/**
 * The `/v1` onRequest hook: `authenticate`, then count the request against the caller's budget
 * (its API key, or the editor's OAuth client). A request that fails authentication is counted
 * against its address instead, so that made-up keys cannot flood the key lookups.
 */
export function authenticateThenLimit(app: FastifyInstance, perMinute: number, authenticate: Hook): onRequestAsyncHookHandler {
  if (perMinute === 0) return async (request, reply) => authenticate(request, reply)
  const byCaller = app.rateLimit({ max: perMinute, keyGenerator: (request) => callerKey(request.principal) })
  const byAddress = app.rateLimit({ max: perMinute, keyGenerator: addressKey })
  return async function (request, reply) {
    try {
      await authenticate(request, reply)
    } catch (error) {
      await byAddress.call(this, request, reply)
      throw error
    }
    await byCaller.call(this, request, reply)
  }
}

/**
 * The `/auth/*` endpoints share one stricter budget per client address: they check credentials
 * (each OAuth client check is a deliberately slow hash), and their callers have no key yet.
 */
export function limitAuthEndpoints(scope: FastifyInstance, perMinute: number): void {
  declareTooManyRequests(scope)
  if (perMinute > 0) scope.addHook('onRequest', scope.rateLimit({ max: perMinute, keyGenerator: addressKey }))
}

/** Every route of `scope` may answer 429. */
export function declareTooManyRequests(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const schema = (route.schema ??= {}) as { response?: Record<string, unknown> }
    schema.response = { 429: ErrorResponse, ...schema.response }
  })
}
