import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { Config } from './config.js'
import { EsdbEventStore } from './eventstore/esdb.js'
import type { EventStore } from './eventstore/port.js'
import { PostgresEventStore } from './eventstore/postgres.js'
import type { Logger } from './logger.js'
import type { CommandContext } from './commands/context.js'
import { ConversationRunner } from './engine/runner.js'
import { WebhookDelivery } from './webhooks/delivery.js'
import { allProjections } from './projections/index.js'
import { ProjectionRuntime } from './projections/runtime.js'
import { openStorage, type DatabaseTarget, type Storage } from './store/connect.js'
import { lockDataDir } from './store/lock.js'
import { migrateToLatest } from './store/migrate.js'

/** Storage, event store and read models, migrated and ready; shared by the server and the CLI. */
export interface Backend {
  config: Config
  storage: Storage
  store: EventStore
  readModels: ProjectionRuntime
  /** Runs conversations; started by the server, not by CLI commands. */
  conversations: ConversationRunner
  /** Sends the webhook outbox; started by the server, not by CLI commands. */
  webhooks: WebhookDelivery
  /** True on the embedded PGlite default. */
  embedded: boolean
  close(): Promise<void>
}

export const storageTarget = (config: Config): DatabaseTarget =>
  config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: join(config.dataDir, 'pglite') }

export async function openBackend(config: Config, logger: Logger): Promise<Backend> {
  const embedded = !config.databaseUrl
  const unlock = embedded ? lockDataDir(config.dataDir) : () => {}
  try {
    const storage = await openStorage(storageTarget(config))
    await migrateToLatest(storage.db)
    const store: EventStore =
      config.eventStore === 'esdb'
        ? new EsdbEventStore({ connectionString: config.eventstoreConnectionString! })
        : new PostgresEventStore({ db: storage.db, pool: storage.pool })
    const readModels = new ProjectionRuntime(storage.projectorDb, store, allProjections, logger)
    const conversations = new ConversationRunner({ db: storage.db, store, readModels, logger })
    const webhooks = new WebhookDelivery(
      storage.db,
      readModels,
      { allowedPrivateCidrs: config.webhookAllowedPrivateCidrs, caFile: config.webhookCaFile, retrySchedule: config.webhookRetrySchedule },
      logger,
    )
    return {
      config,
      storage,
      store,
      readModels,
      conversations,
      webhooks,
      embedded,
      async close() {
        await webhooks.close()
        await conversations.stop()
        await readModels.stop()
        await store.close()
        await storage.close()
        unlock()
      },
    }
  } catch (error) {
    unlock()
    throw error
  }
}

/** Commands run by an operator from the CLI or by the service itself, not by an API key. */
export const systemContext = (backend: Backend, logger: Logger): CommandContext => ({
  store: backend.store,
  readModels: backend.readModels,
  logger,
  now: () => new Date(),
  metadata: { actor: 'system', correlationId: randomUUID() },
})
