import type { FastifyInstance } from 'fastify'
import { bootstrap, type Bootstrapped } from './commands/tenancy.js'
import { openBackend, systemContext, type Backend } from './composition.js'
import type { Config } from './config.js'
import { buildApp } from './http/app.js'
import type { Logger } from './logger.js'
import { Metrics } from './metrics/registry.js'
import { dashboardSignInUrl, issueSignInLink } from './auth/dashboard-sessions.js'
import { oldestAdminKeyHash } from './projections/api-keys.js'
import { ROLES, type Role } from './roles.js'


export interface RunningService {
  app: FastifyInstance
  backend: Backend
  roles: readonly Role[]
  /** Base address the API (or, without the api role, the health routes) listens on, e.g. http://127.0.0.1:3000. */
  address: string
  /** Set when this start created the default organization: its key, shown once. */
  bootstrapped: Bootstrapped | undefined
  /** Whether an organization existed before this start (keys were made before, and are not shown again). */
  hadOrganizations: boolean
  /**
   * On the embedded store with the api role: a one-time link that signs the dashboard in with the
   * oldest live organization-admin key (the one printed at the first start), like a notebook
   * server's token link. A shared Postgres deployment prints none (`flowd dashboard-link` makes one).
   */
  signInLink: string | undefined
  /** Stops accepting, finishes requests in flight, then stops the read models at a clean checkpoint. */
  close(): Promise<void>
}

/**
 * Opens the backend, starts the roles asked for and listens: the API with the api role, else only
 * the health routes (and /metrics).
 */
export async function startService(config: Config, logger: Logger, roles: readonly Role[] = ROLES): Promise<RunningService> {
  const metrics = config.metricsEnabled ? new Metrics(logger) : undefined
  const backend = await openBackend(config, logger, metrics, roles)
  try {
    if (roles.includes('projector')) await backend.readModels.start()
    if (roles.includes('engine')) await backend.conversations.start()
    if (roles.includes('dispatcher')) backend.webhooks.start()
    // Unknown (undefined) on EventStoreDB: taken as some, so nothing is bootstrapped over them.
    const hadOrganizations = (await backend.store.count({ streamPrefixes: ['organization-'] })) !== 0
    const bootstrapped =
      backend.embedded && roles.includes('api') && !hadOrganizations
        ? await bootstrap(systemContext(backend, logger), { organization: 'Default organization', workspace: 'Default workspace', callbackUrl: null })
        : undefined
    const app = await buildApp({
      config,
      db: backend.storage.db,
      store: backend.store,
      readModels: backend.readModels,
      logger,
      now: () => new Date(),
      secrets: backend.secrets,
      metrics,
      generatedText: backend.generatedText,
      healthOnly: !roles.includes('api'),
    })
    await app.listen({ port: config.port, host: config.host })
    const { port } = app.server.address() as { port: number }
    const host = config.host.includes(':') ? `[${config.host}]` : config.host
    const adminKeyHash = backend.embedded && roles.includes('api') ? await oldestAdminKeyHash(backend.storage.db) : undefined
    const signInToken = adminKeyHash && (await issueSignInLink(backend.storage.db, adminKeyHash, new Date()))
    return {
      app,
      backend,
      roles,
      address: `http://${host}:${port}`,
      bootstrapped,
      hadOrganizations,
      signInLink: signInToken ? dashboardSignInUrl(`http://${host}:${port}`, signInToken) : undefined,
      async close() {
        await app.close()
        await backend.close()
      },
    }
  } catch (error) {
    await backend.close()
    throw error
  }
}
