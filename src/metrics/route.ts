import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
// Declares the route schema's `hide`, which keeps /metrics out of the OpenAPI document.
import type {} from '@fastify/swagger'
import { UnauthorizedError } from '../errors.js'
import type { Metrics } from './registry.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/** Compares digests, so neither the token's length nor its content leaks through timing. */
const bearerMatches = (authorization: string | undefined, token: string): boolean => {
  const presented = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1]
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token))
}

/** Times every response by route pattern: the raw URL would make a label value per id. */
export function instrumentRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
  })
}

/** `GET /metrics`, outside /v1 and its API keys; behind `Authorization: Bearer <token>` when a token is set. */
export const metricsRoutes =
  (metrics: Metrics, token: string | undefined): FastifyPluginAsync =>
  async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
        throw Object.assign(new UnauthorizedError('A valid bearer token is required for /metrics'), { headers: { 'www-authenticate': 'Bearer realm="metrics"' } })
      }
      const { contentType, body } = await metrics.exposition()
      return reply.header('cache-control', 'no-store').type(contentType).send(body)
    })
  }
