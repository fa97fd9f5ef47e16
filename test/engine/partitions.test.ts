import t from 'tap'
import { v5 as uuidV5 } from 'uuid'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { START, comparePositions } from '../../src/eventstore/port.js'
import { UNPARTITIONED_CHECKPOINT, everyPartition, fairShare, partitionCheckpoint, partitionOf, partitionPositions } from '../../src/engine/partitions.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import { advanceCheckpoints, readCheckpoints } from '../../src/projections/checkpoints.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Sessions split into partitions by a hash of their id: the hash, each process's share, and the
// checkpoint a partition goes on from, the unpartitioned one included.

const ID_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'

t.test('a session id always maps to the same partition', async (t) => {
  t.equal(partitionOf('00000000-0000-0000-0000-000000000000', 16), 1, 'a fixed id, a fixed partition: the hash never changes')
  t.equal(partitionOf('0190b3a2-7c4e-7d1a-9f00-5e2b8c9d1a34', 16), 11)
  t.equal(partitionOf('0190b3a2-7c4e-7d1a-9f00-5e2b8c9d1a34', 1024), 939)
})

t.test('session ids spread over every partition', async (t) => {
  const count = 16
  const ids = [
    // Ids made one after the other (UUID v7, as the service makes them) share their first half.
    ...Array.from({ length: 1600 }, (_, i) => `0190b3a2-7c4e-7d1a-9f00-${i.toString(16).padStart(12, '0')}`),
    ...Array.from({ length: 1600 }, (_, i) => uuidV5(String(i), ID_NAMESPACE)),
  ]
  const sessions = new Array<number>(count).fill(0)
  for (const id of ids) sessions[partitionOf(id, count)]!++
  const mean = ids.length / count
  t.ok(
    sessions.every((n) => n > mean / 2 && n < mean * 1.5),
    'every partition gets between half and one and a half times its even share',
    { sessions },
  )
})

t.test('each engine process holds at most its fair share', async (t) => {
  t.equal(fairShare(16, 1), 16, 'one process holds every partition')
  t.equal(fairShare(16, 3), 6, 'three share 16 as 6, 6 and 4 at most')
  t.equal(fairShare(16, 16), 1)
  t.equal(fairShare(16, 20), 1, 'more processes than partitions: one each, the rest stand by')
  t.equal(fairShare(16, 0), 16, 'not yet counted: this process alone')
})

t.test('ENGINE_PARTITIONS: 16 by default, a whole number from 1 to 256', async (t) => {
  t.equal(loadConfig({}).enginePartitions, 16)
  t.equal(loadConfig({ ENGINE_PARTITIONS: ' 8 ' }).enginePartitions, 8)
  for (const raw of ['0', '257', 'all', '2.5']) {
    t.throws(() => loadConfig({ ENGINE_PARTITIONS: raw }), new ConfigError([`ENGINE_PARTITIONS=${raw}: expected a whole number from 1 to 256`]), `${raw} is refused, by name`)
  }
})

for (const backend of reachableBackends) {
  t.test(`a partition goes on from its checkpoint, else from the unpartitioned one, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    t.same([...(await partitionPositions(storage.db, [0, 1])).values()], [START, START], 'no checkpoint at all: from the start')
    const old = { commit: 40n, prepare: 40n }
    await advanceCheckpoints(storage.db, [UNPARTITIONED_CHECKPOINT], old)
    await advanceCheckpoints(storage.db, [partitionCheckpoint(1)], { commit: 90n, prepare: 90n })
    t.same(
      Object.fromEntries(await partitionPositions(storage.db, [0, 1])),
      { 0: old, 1: { commit: 90n, prepare: 90n } },
      'a partition without a checkpoint of its own from the unpartitioned one; with one, from its own',
    )
    await advanceCheckpoints(storage.db, [partitionCheckpoint(1)], { commit: 70n, prepare: 70n })
    t.same((await readCheckpoints(storage.db, [partitionCheckpoint(1)])).get(partitionCheckpoint(1)), { commit: 90n, prepare: 90n }, 'a checkpoint never moves back')
  })

  t.test(`engines partitioned over an unpartitioned checkpoint run every turn after it once and none before it, on ${backend.name}`, async (t) => {
    const { app, admin, store, storage, readModels } = await openTestApp(t, backend, { engine: false })
    const call = async (url: string, payload: object = {}) => (await app.inject({ method: 'POST', url, headers: { 'x-api-key': admin.apiKey }, payload })).json()
    await call('/v1/variables', { name: 'said', type: 'string' })
    const flow = await call('/v1/flows', { name: 'Echo', definition: echoFlow })
    const before = (await call(`/v1/sessions/flows/${flow.id}/create`)).sessionId as string
    // The unpartitioned engine had handled everything written so far.
    await advanceCheckpoints(storage.db, [UNPARTITIONED_CHECKPOINT], await store.headPosition({ streamPrefixes: ['session-'] }))
    const after = (await call(`/v1/sessions/flows/${flow.id}/create`)).sessionId as string

    const conversations = new ConversationRunner({ db: storage.db, store, readModels, logger: silentLogger })
    await conversations.start()
    t.teardown(() => conversations.stop())
    const turnsOf = async (sessionId: string) => (await store.readStream(sessionStream(sessionId))).filter((e) => (e as unknown as SessionEvent).type === 'TurnCompleted')
    await eventually('the start turn of the session written after the checkpoint', async () => ((await turnsOf(after)).length === 1 ? true : undefined))
    t.equal((await turnsOf(before)).length, 0, 'the session handled before the checkpoint is not run again (the engine goes through the log in order)')
    const reached = (await store.readStream(sessionStream(after))).at(-1)!.position
    const names = everyPartition(16).map(partitionCheckpoint)
    await eventually('every partition checkpoint past the turn', async () => {
      const stored = await readCheckpoints(storage.db, names)
      return names.every((name) => comparePositions(stored.get(name) ?? START, reached) >= 0) ? true : undefined
    })
    t.pass('each partition has a checkpoint of its own from there on')
  })
}
