import { randomUUID } from 'node:crypto'
import cookie from '@fastify/cookie'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
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
import type { SecretKeyring } from '../secrets/keyring.js'
import { EditorAuth } from '../auth/editor-auth.js'
import { loadEditorSigningKey } from '../auth/signing-key.js'
import { ApiKeyAuthenticator, authenticate, WorkspaceOrganizations } from './auth.js'
import { dashboardSessionOf } from './dashboard-session.js'
import { frameworkErrors, registerErrorHandling } from './errors.js'
import { ErrorResponse } from './schemas.js'
import { refuseDeepBodies, schemaErrorMessage, validatorCompiler } from './validation.js'
import { lazySerializers } from './lazy-serializers.js'
import { documentApiSecurity, registerOpenApi, serveOpenApi, tagsOf, type Tag } from './openapi.js'
import { authenticateThenLimit, declareTooManyRequests, limitAuthEndpoints, registerRateLimiting } from './rate-limit.js'
import * as aiConnections from './routes/ai-connections.js'
import * as aiSteps from './routes/ai-steps.js'
import * as conversationTests from './routes/conversation-tests.js'
import * as replays from './routes/replays.js'
import type { GeneratedText } from '../engine/generated-text.js'
import * as apiKeys from './routes/api-keys.js'
import * as auth from './routes/auth.js'
import * as clients from './routes/clients.js'
import * as dashboardSession from './routes/dashboard-session.js'
import { embedDemoRoutes } from './routes/embed-demo.js'
import * as flowAnalytics from './routes/flow-analytics.js'
import * as flows from './routes/flows.js'
import * as health from './routes/health.js'
import * as kanban from './routes/kanban.js'
import * as secrets from './routes/secrets.js'
import * as sectors from './routes/sectors.js'
import * as sessionStream from './routes/session-stream.js'
import * as sessions from './routes/sessions.js'
import * as transcripts from './routes/transcripts.js'
import * as variables from './routes/variables.js'
import * as httpRequests from './routes/http-requests.js'
import { webRoutes } from './routes/web.js'
import * as webhooks from './routes/webhooks.js'
import * as workspaces from './routes/workspaces.js'
import { acceptEmptyJson } from './empty-json.js'

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
  /** The data keys of workspace secrets and the master keys that wrap them (`Backend.secrets`). */
  secrets: SecretKeyring
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
  /** The text of AI replies as the engine reads it, for session streams (`Backend.generatedText`); none: streams show replies with their turn. */
  generatedText?: GeneratedText
  /** Serve only /healthz, /readyz and /metrics: a process without the api role (see `flowd start --role`). */
  healthOnly?: boolean
}

export const BODY_LIMIT_BYTES = 1024 * 1024

/**
 * A resource of `/v1`: its routes, and the tag they carry in the document (a module that adds
 * routes to another's resource shares that one's tag).
 */
interface ApiModule {
  openApiTag: Tag
  routes(deps: AppDeps): FastifyPluginAsyncTypebox
}

/**
 * The modules of `/v1`, registered in this order; the document lists their tags in this order,
 * then those of the sign-in and the health routes.
 */
const API = [workspaces, clients, apiKeys, sectors, flows, conversationTests, replays, flowAnalytics, variables, secrets, aiConnections, aiSteps, httpRequests, sessions, sessionStream, transcripts, kanban, webhooks] satisfies ApiModule[]

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
    schemaErrorFormatter: (errors, dataVar) => new Error(schemaErrorMessage(errors, dataVar)),
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(validatorCompiler)
  app.addHook('preValidation', refuseDeepBodies)
  // JSON only: any other body type is answered 415.
  app.removeContentTypeParser('text/plain')
  registerErrorHandling(app)
  await registerOpenApi(app, deps.config, tagsOf([...API, auth, dashboardSession, health]))
  if (deps.metrics) instrumentRequests(app, deps.metrics)
  await registerRateLimiting(app)
  await app.register(cookie)
  // Closing shuts idle connections at once; one still answering a request would stay open after its
  // answer for the keep-alive timeout (72 s), holding the process's exit. Its answer closes it instead.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id)
    if (closing) void reply.header('connection', 'close')
  })

  await app.register(health.routes(deps))
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
  await app.register(async (signIn) => {
    limitAuthEndpoints(signIn, deps.config.authRateLimitPerMinute)
    await signIn.register(auth.routes(editorAuth))
    await signIn.register(dashboardSession.routes({ db: deps.db, editorAuth, now: deps.now }))
  })
  if (deps.config.embedDemo) await app.register(embedDemoRoutes({ editorUrl: deps.config.editorUrl }))

  const authenticator = new ApiKeyAuthenticator(deps.db, deps.apiKeyCacheMs)
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', authenticateThenLimit(v1, deps.config.rateLimitPerMinute, authenticate(authenticator, editorAuth, async (request) => (await dashboardSessionOf(deps.db, request, deps.now()))?.session, new WorkspaceOrganizations(deps.db))))
      // Any /v1 route may answer 401 or 403 from that hook (403: the editor's token on a route not
      // meant for it), and 503 while the database is unreachable.
      v1.addHook('onRoute', documentApiSecurity)
      v1.addHook('onRoute', (route) => {
        const schema = (route.schema ??= {}) as { response?: Record<string, unknown> }
        schema.response = { 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse, ...schema.response }
      })
      declareTooManyRequests(v1)
      acceptEmptyJson(v1)
      for (const resource of API) await v1.register(resource.routes(deps))
    },
    { prefix: '/v1' },
  )

  return app
}
