import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { Config } from './config.js'
import type { EventStore } from './eventstore/port.js'
import { PostgresEventStore } from './eventstore/postgres.js'
import { WakeUp } from './eventstore/wake-up.js'
import type { Logger } from './logger.js'
import { countingAppends } from './metrics/event-store.js'
import type { Metrics } from './metrics/registry.js'
import { ROLES, type Role } from './roles.js'
import type { CommandContext } from './commands/context.js'
import { ENGINE_LEASE_APPLICATION_NAME } from './engine/partitions.js'
import { ConversationRunner } from './engine/runner.js'
import { GeneratedText } from './engine/generated-text.js'
import { DispatcherRole } from './webhooks/dispatcher-role.js'
import { countUnsettledDeliveries, oldestOpenDeliveryAt } from './webhooks/deliveries.js'
import { countFailingDestinations } from './webhooks/destinations.js'
import { allProjections } from './all-projections.js'
import { poolSizes } from './connection-budget.js'
import { CHECKPOINTS_CHANNEL, ProjectionRuntime } from './projections/runtime.js'
import { openStorage, type DatabaseTarget, type Storage } from './store/connect.js'
import { AdvisoryLeases, type Leases } from './store/lease.js'
import { lockDataDir } from './store/lock.js'
import { migrateToLatest } from './store/migrate.js'
import { SecretKeyring } from './secrets/keyring.js'
import { revealSecrets } from './commands/secrets.js'
import { loadMasterKeys } from './secrets/master-keys.js'

/** Storage, event store and read models, migrated and ready; shared by the server and the CLI. */
export interface Backend {
  config: Config
  storage: Storage
  store: EventStore
  readModels: ProjectionRuntime
  /** Runs conversations; started by the server, not by CLI commands. */
  conversations: ConversationRunner
  /** Sends the webhook outbox; started by the server, not by CLI commands. */
  webhooks: DispatcherRole
  /** The data keys of workspace secrets: what the API writes with and `revealSecrets` reads with. */
  secrets: SecretKeyring
  /** The text of AI replies as the engine reads it, on its way to the session streams of every process. */
  generatedText: GeneratedText
  /** One process at a time for leased work (Postgres); absent on the embedded database, one process. */
  leases: Leases | undefined
  /** True on the embedded PGlite default. */
  embedded: boolean
  close(): Promise<void>
}

/** The database, with the pools a process of `roles` needs (CLI commands: every role's). */
export function storageTarget(config: Config, roles: readonly Role[] = ROLES): DatabaseTarget {
  if (!config.databaseUrl) return { kind: 'pglite', dataDir: join(config.dataDir, 'pglite') }
  const pools = poolSizes(roles, config)
  return { kind: 'postgres', url: config.databaseUrl, poolSize: pools.shared, projectorPoolSize: pools.projector, dispatcherPoolSize: pools.dispatcher }
}

/**
 * With `metrics`, appends, turns and webhook attempts are counted and read-model lag and the outbox
 * are read on scrape. `roles`: those the process will start, which size its pools.
 */
export async function openBackend(config: Config, logger: Logger, metrics?: Metrics, roles: readonly Role[] = ROLES): Promise<Backend> {
  const embedded = !config.databaseUrl
  const unlock = embedded ? lockDataDir(config.dataDir) : () => {}
  try {
    const masterKeys = await loadMasterKeys(config)
    if (masterKeys.source === 'DATA_DIR' && config.databaseUrl) {
      logger.warn({ masterKeyId: masterKeys.current.id }, 'SECRETS_KEY is unset: workspace secrets are wrapped by a key generated in DATA_DIR, which other processes of this database do not have; set SECRETS_KEY on every process')
    }
    const storage = await openStorage(storageTarget(config, roles))
    await migrateToLatest(storage.db)
    const secrets = new SecretKeyring(storage.db, masterKeys)
    // Processes sharing a Postgres database take turns: one active reader per projection and one
    // engine per partition of the sessions (leases), and they tell each other when a checkpoint
    // moves. The embedded database is one process.
    const leases = config.databaseUrl ? new AdvisoryLeases(config.databaseUrl, logger) : undefined
    // The engine's leases on a connection of their own, named so that engine processes can count
    // each other: the session that holds a process's partitions is the one that shows it alive,
    // and both end together when the process dies, with nothing to expire.
    const engineLeases = config.databaseUrl ? new AdvisoryLeases(config.databaseUrl, logger, ENGINE_LEASE_APPLICATION_NAME) : undefined
    // The EventStoreDB client (gRPC) loads only where it is used.
    const adapter: EventStore =
      config.eventStore === 'esdb'
        ? new (await import('./eventstore/esdb.js')).EsdbEventStore({
            connectionString: config.eventstoreConnectionString!,
            onSubscriptionError: (error, { retryInMs, permanent }) => {
              metrics?.eventStoreSubscriptionErrors.inc({ kind: permanent ? 'permanent' : 'transient' })
              if (permanent) logger.error({ err: error, retryInMs }, 'EventStoreDB refused a subscription: fix the connection string, the credentials or the ACLs; /readyz reports not ready until it subscribes')
              else logger.warn({ err: error, retryInMs }, 'EventStoreDB subscription failed; subscribing again')
            },
          })
        : new PostgresEventStore({ db: storage.db, pool: storage.pool })
    const store = metrics ? countingAppends(adapter, metrics) : adapter
    const checkpointsMoved = storage.pool ? new WakeUp(CHECKPOINTS_CHANNEL, storage.pool) : undefined
    const readModels = new ProjectionRuntime(storage.db, store, allProjections, logger, { applyDb: storage.projectorDb, leases, checkpointsMoved, metrics })
    const generatedText = new GeneratedText(storage.pool, logger)
    const conversations = new ConversationRunner({
      db: storage.db,
      store,
      readModels,
      logger,
      metrics,
      leases: engineLeases,
      partitions: config.enginePartitions,
      // A flow's calls reach what webhooks may reach: the same private ranges and extra CA.
      calls: { allowedPrivateCidrs: config.webhookAllowedPrivateCidrs, caFile: config.webhookCaFile, revealSecrets: (workspaceId, names) => revealSecrets({ store, secrets }, workspaceId, names), generatedText },
    })
    const webhooks = new DispatcherRole(
      storage.dispatcherDb,
      readModels,
      { allowedPrivateCidrs: config.webhookAllowedPrivateCidrs, caFile: config.webhookCaFile, retrySchedule: config.webhookRetrySchedule, concurrency: config.webhookMaxInFlight, perDestination: config.webhookMaxInFlightPerDestination, health: { failuresBeforeFailing: config.webhookFailuresBeforeFailing, probeSchedule: config.webhookProbeSchedule }, leaseMs: config.webhookLeaseSeconds * 1000, metrics, checkpointsMoved },
      logger,
    )
    metrics?.watchProjections(readModels)
    metrics?.watchOutbox(storage.db, { countUnsettledDeliveries, oldestOpenDeliveryAt, countFailingDestinations })
    return {
      config,
      storage,
      store,
      readModels,
      conversations,
      webhooks,
      secrets,
      generatedText,
      leases,
      embedded,
      async close() {
        await webhooks.close()
        await conversations.stop()
        await generatedText.close()
        // At once, so that other engine processes stop counting this one.
        await engineLeases?.close()
        await readModels.stop()
        await checkpointsMoved?.close()
        await leases?.close()
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
