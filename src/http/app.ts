import { randomUUID } from 'node:crypto'
import cookie from '@fastify/cookie'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import type { ScryptCost } from '../commands/oauth-clients.js'
import type { Config } from '../config.js'
import type { EventStore } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import { instrumentRequests, metricsRoutes } from '../metrics/route.js'
import type { Metrics } from '../metrics/registry.js'
import type { ProjectionRuntime } from '../projections/runtime.js'
import type { Database } from '../store/database.js'
import type { Resolver } from '../webhooks/callback-url.js'
import { EditorAuth } from '../auth/editor-auth.js'
import { loadEditorSigningKey } from '../auth/signing-key.js'
import { ApiKeyAuthenticator, authenticate } from './auth.js'
import { dashboardSessionOf } from './dashboard-session.js'
import { frameworkErrors, registerErrorHandling } from './errors.js'
import { ErrorResponse } from './schemas.js'
import { refuseDeepBodies, validatorCompiler } from './validation.js'
import { documentApiSecurity, registerOpenApi, serveOpenApi } from './openapi.js'
import { authenticateThenLimit, declareTooManyRequests, limitAuthEndpoints, registerRateLimiting } from './rate-limit.js'
import { apiKeyRoutes } from './routes/api-keys.js'
import { authRoutes } from './routes/auth.js'
import { dashboardSessionRoutes } from './routes/dashboard-session.js'
import { clientRoutes } from './routes/clients.js'
import { webRoutes } from './routes/web.js'
import { embedDemoRoutes } from './routes/embed-demo.js'
import { flowAnalyticsRoutes } from './routes/flow-analytics.js'
import { healthRoutes } from './routes/health.js'
import { flowRoutes } from './routes/flows.js'
import { kanbanRoutes } from './routes/kanban.js'
import { webhookRoutes } from './routes/webhooks.js'
import { sectorRoutes } from './routes/sectors.js'
import { sessionStreamRoutes } from './routes/session-stream.js'
import { sessionRoutes } from './routes/sessions.js'
import { transcriptRoutes } from './routes/transcripts.js'
import { variableRoutes } from './routes/variables.js'
import { workspaceRoutes } from './routes/workspaces.js'

export interface AppDeps {
  config: Config
  db: Kysely<Database>
  store: EventStore
  readModels: Pick<ProjectionRuntime, 'waitFor' | 'status'>
  logger: Logger
  now(): Date
  /**
   * How long a found API key, or the live OAuth client behind an editor access token, is trusted
   * before it is looked up again (revocation delay).
   */
  apiKeyCacheMs?: number
  /** Signs editor access tokens; by default `EDITOR_TOKEN_SECRET` or the secret kept in `DATA_DIR`. */
  editorTokenKey?: Uint8Array
  /** Resolves callback host names at key create/update; the system resolver by default (tests inject a fake DNS). */
  resolveHost?: Resolver
  /**
   * The scrypt cost of new OAuth client secrets (and of the decoy hash unknown clients are checked
   * against). Production's (N 2^15, r 8, p 1) by default; only tests that create clients by the
   * thousand pass a cheaper one. Nothing in the configuration or the environment sets it.
   */
  clientSecretCost?: ScryptCost
  /** This process's metrics: requests are timed into it and `/metrics` serves it. None: neither. */
  metrics?: Metrics
  /** Serve only /healthz, /readyz and /metrics: a process without the api role (see `flowd start --role`). */
  healthOnly?: boolean
}

export const BODY_LIMIT_BYTES = 1024 * 1024

/** Builds the HTTP application from its dependencies; it does not listen (tests use `inject`). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = deps.logger
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: 'x-request-id',
    trustProxy: deps.config.trustProxy,
    genReqId: () => randomUUID(),
    frameworkErrors,
    schemaErrorFormatter: (errors, dataVar) =>
      new Error(
        errors
          .map((e) => {
            const allowed = e.keyword === 'enum' ? `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : ''
            return `${dataVar}${e.instancePath} ${e.message}${allowed}`
          })
          .join(', '),
      ),
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(validatorCompiler)
  app.addHook('preValidation', refuseDeepBodies)
  // JSON only: any other body type is answered 415.
  app.removeContentTypeParser('text/plain')
  registerErrorHandling(app)
  await registerOpenApi(app, deps.config)
  if (deps.metrics) instrumentRequests(app, deps.metrics)
  await registerRateLimiting(app)
  await app.register(cookie)
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id)
  })

  await app.register(healthRoutes(deps))
  if (deps.metrics) await app.register(metricsRoutes(deps.metrics, deps.config.metricsToken))
  if (deps.healthOnly) return app
  await serveOpenApi(app)
  await app.register(webRoutes({ frameAncestors: deps.config.editorFrameAncestors }))

  const editorAuth = new EditorAuth({
    db: deps.db,
    signingKey: deps.editorTokenKey ?? (await loadEditorSigningKey(deps.config)),
    now: deps.now,
    clientCacheMs: deps.apiKeyCacheMs,
    clientSecretCost: deps.clientSecretCost,
    metrics: deps.metrics,
  })
  await app.register(async (auth) => {
    limitAuthEndpoints(auth, deps.config.authRateLimitPerMinute)
    await auth.register(authRoutes(editorAuth))
    await auth.register(dashboardSessionRoutes({ db: deps.db, editorAuth, now: deps.now }))
  })
  if (deps.config.embedDemo) await app.register(embedDemoRoutes({ editorUrl: deps.config.editorUrl }))

  const authenticator = new ApiKeyAuthenticator(deps.db, deps.apiKeyCacheMs)
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', authenticateThenLimit(v1, deps.config.rateLimitPerMinute, authenticate(authenticator, editorAuth, async (request) => (await dashboardSessionOf(deps.db, request, deps.now()))?.session)))
      // Any /v1 route may answer 401 or 403 from that hook (403: the editor's token on a route not
      // meant for it), and 503 while the database is unreachable.
      v1.addHook('onRoute', documentApiSecurity)
      v1.addHook('onRoute', (route) => {
        const schema = (route.schema ??= {}) as { response?: Record<string, unknown> }
        schema.response = { 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse, ...schema.response }
      })
      declareTooManyRequests(v1)
      await v1.register(workspaceRoutes(deps))
      await v1.register(clientRoutes(deps))
      await v1.register(apiKeyRoutes(deps))
      await v1.register(sectorRoutes(deps))
      await v1.register(flowRoutes(deps))
      await v1.register(flowAnalyticsRoutes(deps))
      await v1.register(variableRoutes(deps))
      await v1.register(sessionRoutes(deps))
      await v1.register(sessionStreamRoutes(deps))
      await v1.register(transcriptRoutes(deps))
      await v1.register(kanbanRoutes(deps))
      await v1.register(webhookRoutes(deps))
    },
    { prefix: '/v1' },
  )

  return app
}
