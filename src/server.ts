import type { FastifyInstance } from 'fastify'
import { bootstrap, type Bootstrapped } from './commands/tenancy.js'
import { openBackend, systemContext, type Backend } from './composition.js'
import type { Config } from './config.js'
import { buildApp } from './http/app.js'
import type { Logger } from './logger.js'

export interface RunningService {
  app: FastifyInstance
  backend: Backend
  /** Base address the API listens on, e.g. http://127.0.0.1:3000. */
  address: string
  /** Set when this start created the default organization: its key, shown once. */
  bootstrapped: Bootstrapped | undefined
  /** Stops accepting, finishes requests in flight, then stops the read models at a clean checkpoint. */
  close(): Promise<void>
}

/** Opens the backend, starts the read models and listens. */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const backend = await openBackend(config, logger)
  try {
    await backend.readModels.start()
    await backend.conversations.start()
    backend.webhooks.start()
    const bootstrapped =
      backend.embedded && (await backend.store.count({ streamPrefixes: ['organization-'] })) === 0
        ? await bootstrap(systemContext(backend, logger), { organization: 'Default organization', workspace: 'Default workspace', callbackUrl: null })
        : undefined
    const app = await buildApp({
      config,
      db: backend.storage.db,
      store: backend.store,
      readModels: backend.readModels,
      logger,
      now: () => new Date(),
    })
    await app.listen({ port: config.port, host: config.host })
    const { port } = app.server.address() as { port: number }
    const host = config.host.includes(':') ? `[${config.host}]` : config.host
    return {
      app,
      backend,
      address: `http://${host}:${port}`,
      bootstrapped,
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
