import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { bootstrap, type Bootstrapped } from '../../src/commands/tenancy.js'
import type { CommandContext } from '../../src/commands/context.js'
import { loadConfig, type Config } from '../../src/config.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import type { EventStore } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { buildApp, type AppDeps } from '../../src/http/app.js'
import { countingAppends } from '../../src/metrics/event-store.js'
import { Metrics } from '../../src/metrics/registry.js'
import { allProjections } from '../../src/all-projections.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import type { Storage } from '../../src/store/connect.js'
import { DispatcherRole } from '../../src/webhooks/dispatcher-role.js'
import { countUnsettledDeliveries, oldestOpenDeliveryAt } from '../../src/webhooks/deliveries.js'
import { countFailingDestinations } from '../../src/webhooks/destinations.js'
import { fakeDns } from '../helpers/blocked-callbacks.js'
import { silentLogger, testEditorTokenKey, testKeyring } from '../helpers/app.js'
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js'
import type { Backend } from '../helpers/storage.js'
import { parseExposition, type Exposition } from './exposition.js'

const LOOPBACK = '127.0.0.1/32'

export interface MetricsHarness {
  metrics: Metrics
  app: FastifyInstance
  /** The dependencies the app was built from, to build another with a different configuration. */
  deps: AppDeps
  storage: Storage
  /** The adapter itself; everything in the harness writes through `store`, which counts appends. */
  adapter: PostgresEventStore
  store: EventStore
  readModels: ProjectionRuntime
  ctx: CommandContext
  admin: Bootstrapped
  receiver: HttpsReceiver
  /** GET /metrics, checked to parse as the Prometheus text format. */
  scrape(): Promise<Exposition>
}

/** Three quick attempts: a failing delivery is dead within about half a second. */
const QUICK_RETRIES = [0, 0.2, 0.2]

/**
 * Wired as `openBackend` and `startService` wire production, on a fresh database of `backend`: the
 * event store counted, engine and webhook delivery running with the metrics, read-model lag and
 * the outbox watched, and a local HTTPS receiver that callbacks may reach. `retrySchedule` is the
 * delivery's (seconds before each attempt), three quick attempts unless a test needs a delivery to
 * stay open.
 */
export async function openMetricsHarness(
  t: Test,
  backend: Backend,
  env: Record<string, string> = {},
  options: { retrySchedule?: readonly number[] } = {},
): Promise<MetricsHarness> {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const config: Config = loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: LOOPBACK, ...env })
  const metrics = new Metrics(silentLogger)
  const storage = await backend.open(t)
  const adapter = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 100 })
  const store = countingAppends(adapter, metrics)
  const readModels = new ProjectionRuntime(storage.projectorDb, store, allProjections, silentLogger)
  await readModels.start()
  const now = () => new Date()
  const conversations = new ConversationRunner({ db: storage.db, store, readModels, logger: silentLogger, now, sweepIntervalMs: 200, metrics })
  await conversations.start()
  const webhooks = new DispatcherRole(
    storage.dispatcherDb,
    readModels,
    { allowedPrivateCidrs: [LOOPBACK], caFile: receiver.caFile, retrySchedule: options.retrySchedule ?? QUICK_RETRIES, pollIntervalMs: 100, now, metrics },
    silentLogger,
  )
  webhooks.start()
  metrics.watchProjections(readModels)
  metrics.watchOutbox(storage.db, { countUnsettledDeliveries, oldestOpenDeliveryAt, countFailingDestinations })
  const deps: AppDeps = { config, db: storage.db, store, readModels, logger: silentLogger, now, editorTokenKey: testEditorTokenKey, secrets: testKeyring(storage.db), resolveHost: fakeDns({}), metrics }
  const app = await buildApp(deps)
  t.teardown(async () => {
    await app.close()
    await webhooks.close()
    await conversations.stop()
    await readModels.stop()
    await adapter.close()
  })
  const ctx: CommandContext = { store, readModels, logger: silentLogger, now, metadata: { actor: 'test' } }
  const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
  const scrape = async () => {
    const response = await app.inject({ method: 'GET', url: '/metrics' })
    if (response.statusCode !== 200) throw new Error(`GET /metrics: ${response.statusCode} ${response.body}`)
    if (!String(response.headers['content-type']).startsWith('text/plain; version=0.0.4')) throw new Error(`content type ${response.headers['content-type']}`)
    return parseExposition(response.body)
  }
  return { metrics, app, deps, storage, adapter, store, readModels, ctx, admin, receiver, scrape }
}
