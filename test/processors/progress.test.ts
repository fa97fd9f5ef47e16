import t from 'tap'
import { engineCheckpoint } from '../../src/engine/partitions.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurn } from '../../src/engine/interpreter.js'
import { EngineWorker } from '../../src/engine/worker.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { positionToString, type EventStore, type LogBatch, type Position, type SubscribeOptions } from '../../src/eventstore/port.js'
import { readCheckpoint } from '../../src/projections/checkpoints.js'
import type { Projection } from '../../src/projections/projection.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { silentLogger } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'

// A store that reports having read past other streams (EventStoreDB's filtered subscriptions do)
// hands out batches without events; every log processor then saves the position it reached.

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

/**
 * The store with a subscription that hands out `batches`, then tells `handedOut` (the loop asks for
 * the next batch only once it has handled the one before) and ends with the signal.
 */
function scriptedSubscription(store: EventStore, batches: LogBatch[]): { store: EventStore; handedOut: Promise<void> } {
  let allHandled!: () => void
  const handedOut = new Promise<void>((resolve) => (allHandled = resolve))
  return {
    handedOut,
    store: Object.assign(Object.create(store) as EventStore, {
      async *subscribeAll({ signal }: SubscribeOptions): AsyncIterable<LogBatch> {
        yield* batches
        allHandled()
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }))
      },
    }),
  }
}

const quiet: Projection = { name: 'quiet', streamPrefixes: ['quiet-'], tables: [], async apply() {} }

for (const backend of reachableBackends) {
  t.test(`log processors save progress without events, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const real = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    t.teardown(() => real.close())

    await t.test('a read model', async (t) => {
      const { store, handedOut } = scriptedSubscription(real, [{ events: [], through: at(1024) }, { events: [], through: at(2048) }])
      const runtime = new ProjectionRuntime(storage.db, store, [quiet], silentLogger)
      await runtime.start()
      await handedOut
      await runtime.stop()
      t.equal(positionToString(await readCheckpoint(storage.db, quiet.name)), '2048/2048')
    })

    await t.test('the engine', async (t) => {
      const { store, handedOut } = scriptedSubscription(real, [{ events: [], through: at(4096) }])
      const worker = new EngineWorker(storage.db, store, new FlowVersions(real), runTurn, async () => {}, silentLogger)
      await worker.start()
      await handedOut
      await worker.stop()
      t.equal(positionToString(await engineCheckpoint(storage.db)), '4096/4096')
    })
  })
}
