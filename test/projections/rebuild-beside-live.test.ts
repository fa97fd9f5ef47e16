import t from 'tap'
import { comparePositions } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { readCheckpoint } from '../../src/projections/checkpoints.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { silentLogger } from '../helpers/app.js'
import { heldOutbox } from '../helpers/held-outbox.js'
import { sessionsOn } from '../helpers/session-events.js'
import { reachableBackends } from '../helpers/storage.js'

const waitUntil = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

for (const backend of reachableBackends) {
  t.test(`a rebuild beside the live outbox makes no purged delivery again, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    // On Postgres the live reader holds its lease, as a running service does, and the rebuild (another
    // process) follows it; the embedded database has one process, whose rebuild does the live part too.
    const leasesOf = () => (backend.name === 'postgres' ? new AdvisoryLeases((storage.target as { url: string }).url, silentLogger) : undefined)
    const [liveLeases, rebuildLeases] = [leasesOf(), leasesOf()]
    t.teardown(async () => {
      await liveLeases?.close()
      await rebuildLeases?.close()
    })
    const { startSession, say, deliveries } = sessionsOn(store, db)
    const [a, b] = [await startSession(), await startSession()]
    await say(a, 'hello')
    await say(b, 'hello')
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger, { leases: liveLeases })
    await live.start()
    t.teardown(() => live.stop())
    await waitUntil(async () => (await deliveries())[b] === 1, 'the first webhooks are made')
    await db.deleteFrom('webhook_deliveries').execute()

    let open = () => {}
    let started = false
    const rebuilding = rebuildProjections(storage, store, [heldOutbox(new Promise((resolve) => (open = resolve)), () => (started = true))], { concurrency: 1, leases: rebuildLeases })
    await waitUntil(async () => started, 'the rebuild is replaying')
    await say(a, 'during the rebuild')
    const [said] = (await store.readStream(`session-${a}`)).slice(-1)
    await waitUntil(async () => comparePositions(await readCheckpoint(db, 'webhook-outbox'), said!.position) >= 0, 'the live runtime applies it')
    open()
    await rebuilding
    await say(b, 'after the rebuild')
    await waitUntil(async () => (await deliveries())[b] === 1, 'the live runtime goes on')
    t.same(await deliveries(), { [a]: 1, [b]: 1 }, 'only the webhooks of the turns since the purge: none purged is made again')
    const routes = await readModelRows(db, 'webhook_sessions')
    await live.stop()
    await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })
    t.same(await readModelRows(db, 'webhook_sessions'), routes, 'the routes are those a replay of the whole log makes')
    t.same(await deliveries(), { [a]: 1, [b]: 1 }, 'which makes no delivery again either')
  })
}
