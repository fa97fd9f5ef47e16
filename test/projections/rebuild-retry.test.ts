import t from 'tap'
import { sessionStream } from '../../src/domain/session.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { listParked, parkStream } from '../../src/processors/parked-streams.js'
import { retryParkedStream } from '../../src/projections/checkpoints.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { silentLogger } from '../helpers/app.js'
import { outboxGate } from '../helpers/held-outbox.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { sessionsOn } from '../helpers/session-events.js'
import { reachableBackends } from '../helpers/storage.js'

// `flowd processors retry` replays a parked stream into the live tables; a rebuild running then (or
// starting while the retry runs) swaps in tables of its own, which must hold that stream's rows too.

const waitUntil = async (check: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

for (const backend of reachableBackends) {
  t.test(`a stream retried while a rebuild runs keeps its rows and its route, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)

    const [parked, other] = [await startSession(), await startSession()]
    for (const sessionId of [parked, other]) await say(sessionId, 'hello')
    const [started] = await store.readStream(sessionStream(parked))
    // The live outbox failed on the session's first event and parked it; it went on with the other.
    await parkStream(db, webhookOutboxProjection.name, started!, 'Error: the cause, since fixed', 3)
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await live.start()
    await waitUntil(async () => (await deliveries())[other] === 1, 'the live outbox applies the other session')
    await live.stop()
    t.same(await deliveries(), { [other]: 1 }, 'the parked session has no delivery yet')

    const replay = outboxGate()
    const rebuilding = rebuildProjections(storage, store, [replay.projection], { concurrency: 1 })
    await waitUntil(replay.reached, 'the rebuild is replaying')
    t.equal(await retryParkedStream(db, store, webhookOutboxProjection, sessionStream(parked)), true, 'the retry replays the stream')
    replay.open()
    await rebuilding

    t.same(await listParked(db), [], 'nothing parked')
    t.same(await deliveries(), { [parked]: 1, [other]: 1 }, 'the retried turn delivered once')
    const routes = await readModelRows(db, 'webhook_sessions')
    t.ok(routes.some((row) => row.includes(parked)), 'the retried session has its route')
    await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })
    t.same(await readModelRows(db, 'webhook_sessions'), routes, 'the swapped-in routes are those of a replay with nothing parked')

    await say(parked, 'after the rebuild')
    const after = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await after.start()
    t.teardown(() => after.stop())
    await waitUntil(async () => (await deliveries())[parked] === 2, 'the live outbox applies the new turn')
    t.same(await deliveries(), { [parked]: 2, [other]: 1 }, 'its later turns are delivered')
  })
}

for (const backend of reachableBackends.filter((b) => b.name === 'postgres')) {
  // The embedded database has one connection: a rebuild there cannot start while a retry's transaction is open.
  t.test(`a rebuild that starts while a retry replays keeps the retried rows, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)

    const [parked, other] = [await startSession(), await startSession()]
    for (const sessionId of [parked, other]) await say(sessionId, 'hello')
    const [started] = await store.readStream(sessionStream(parked))
    await parkStream(db, webhookOutboxProjection.name, started!, 'Error: the cause, since fixed', 3)
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await live.start()
    await waitUntil(async () => (await deliveries())[other] === 1, 'the live outbox applies the other session')
    await live.stop()

    // The retry holds its transaction open, its stream replayed but not yet taken off the list.
    const retrying = outboxGate()
    const retried = retryParkedStream(db, store, retrying.projection, sessionStream(parked))
    await waitUntil(retrying.reached, 'the retry is replaying')
    const replay = outboxGate()
    const rebuilding = rebuildProjections(storage, store, [replay.projection], { concurrency: 1 })
    await waitUntil(replay.reached, 'the rebuild is replaying, the stream still parked as it read the list')
    retrying.open()
    t.equal(await retried, true, 'the retry replays the stream')
    replay.open()
    await rebuilding

    t.same(await listParked(db), [], 'nothing parked')
    t.same(await deliveries(), { [parked]: 1, [other]: 1 }, 'the retried turn delivered once')
    const routes = await readModelRows(db, 'webhook_sessions')
    t.ok(routes.some((row) => row.includes(parked)), 'the retried session has its route')
    await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })
    t.same(await readModelRows(db, 'webhook_sessions'), routes, 'the routes are those of a replay with nothing parked')
  })
}
