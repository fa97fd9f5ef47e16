import t from 'tap'
import { START, comparePositions, type Position } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { readCheckpoint } from '../../src/projections/checkpoints.js'
import type { Projection } from '../../src/projections/projection.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { silentLogger } from '../helpers/app.js'
import { sessionsOn } from '../helpers/session-events.js'
import { reachableBackends } from '../helpers/storage.js'

const waitUntil = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

/** The outbox, its rebuild's folds held until `opened` resolves: the live runtime gets ahead of it meanwhile. */
function heldOutbox(opened: Promise<void>): Projection {
  const fold = webhookOutboxProjection.fold!
  return {
    ...webhookOutboxProjection,
    fold: (options) => {
      const inner = fold(options)
      return {
        add: async (db, events) => {
          await opened
          await inner.add(db, events)
        },
        get held() {
          return inner.held
        },
        write: (trx) => inner.write(trx),
      }
    },
  }
}

for (const backend of reachableBackends) {
  t.test(`a rebuild beside the live outbox makes no purged delivery again, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)
    const [a, b] = [await startSession(), await startSession()]
    await say(a, 'hello')
    await say(b, 'hello')
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await live.start()
    t.teardown(() => live.stop())
    await waitUntil(async () => (await deliveries())[b] === 1, 'the first webhooks are made')
    await db.deleteFrom('webhook_deliveries').execute()

    let open = () => {}
    const rebuilding = rebuildProjections(db, store, [heldOutbox(new Promise((resolve) => (open = resolve)))], { concurrency: 1 })
    await waitUntil(async () => comparePositions(await readCheckpoint(db, 'webhook-outbox'), START) === 0, 'the rebuild has reset the checkpoint')
    // The live runtime's next batch finds its checkpoint reset and goes back over the whole log.
    await say(a, 'during the rebuild')
    const [said] = (await store.readStream(`session-${a}`)).slice(-1)
    const reached = async (position: Position) => comparePositions(await readCheckpoint(db, 'webhook-outbox'), position) >= 0
    await waitUntil(() => reached(said!.position), 'the live runtime applies it')
    open()
    await rebuilding
    await say(b, 'after the rebuild')
    await waitUntil(async () => (await deliveries())[b] === 1, 'the live runtime goes on')
    t.same(await deliveries(), { [a]: 1, [b]: 1 }, 'only the webhooks of the turns since the purge: none purged is made again')
  })
}
