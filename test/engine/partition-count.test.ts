import t, { type Test } from 'tap'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { PartitionCountMismatchError, checkPartitionCount, everyPartition, partitionCheckpoint, partitionOf, recordedPartitionCount, repartition } from '../../src/engine/partitions.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import { START, comparePositions } from '../../src/eventstore/port.js'
import { advanceCheckpoints, readCheckpoints } from '../../src/projections/checkpoints.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { echoFlow } from '../helpers/flows.js'
import { reachableBackends, type Backend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The partition checkpoints hold only for the count they were made with. A deployment run with one
// count, whose partitions' checkpoints stand apart (one engine process was ahead of another when
// they stopped), with turns waiting between them; the next deployment has another count. The
// engine refuses to start with it until `repartition` moves the checkpoints; then every session
// gets every turn, once.

/** Sessions per partition of the larger count, so that every old and new partition has some. */
const PER_PARTITION = 2

/** Every trigger a session has had (its start, then its messages) and every turn recorded for one, in order. */
async function triggersAndTurns(store: { readStream(stream: string): Promise<readonly unknown[]> }, sessionId: string) {
  const events = (await store.readStream(sessionStream(sessionId))) as unknown as SessionEvent[]
  const triggers = events.flatMap((e) => (e.type === 'SessionStarted' || e.type === 'MessageReceived' ? [e.data.messageId] : []))
  const turns = events.flatMap((e) => (e.type === 'TurnCompleted' ? [e.data.messageId] : []))
  return { triggers, turns }
}

/**
 * One app whose count is changed twice, each time as a new deployment would: lowered from 4 to 2
 * (old partitions 0 and 1 ahead: new partition 0 holds old 0 and 2, new 1 holds old 1 and 3), then
 * raised from 2 to 4 again (old partition 0 ahead), on sessions of its own each time.
 */
async function changeCounts(t: Test, backend: Backend): Promise<void> {
  const { app, admin, store, storage, readModels } = await openTestApp(t, backend, { engine: false })
  const call = async (url: string, payload: object = {}) => {
    const response = await app.inject({ method: 'POST', url, headers: { 'x-api-key': admin.apiKey }, payload })
    if (response.statusCode >= 400) throw new Error(`POST ${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  const runner = (partitions: number) => new ConversationRunner({ db: storage.db, store, readModels, logger: silentLogger, partitions })
  await call('/v1/variables', { name: 'said', type: 'string' })
  const flow = await call('/v1/flows', { name: 'Echo', definition: echoFlow })

  const changeCount = async (t: Test, from: number, to: number, ahead: readonly number[]) => {
    const widest = Math.max(from, to)
    /** New sessions until each partition of the larger count has PER_PARTITION of them. */
    const createSessions = async () => {
      const made: string[] = []
      const per = new Map<number, number>()
      while (everyPartition(widest).some((p) => (per.get(p) ?? 0) < PER_PARTITION)) {
        const sessionId = (await call(`/v1/sessions/flows/${flow.id}/create`)).sessionId as string
        made.push(sessionId)
        per.set(partitionOf(sessionId, widest), (per.get(partitionOf(sessionId, widest)) ?? 0) + 1)
      }
      return made
    }
    const settled = async (sessionIds: readonly string[], partitions?: { count: number; held: readonly number[] }) =>
      eventually('every trigger of the sessions to have its turn', async () => {
        for (const sessionId of sessionIds) {
          if (partitions && !partitions.held.includes(partitionOf(sessionId, partitions.count))) continue
          const { triggers, turns } = await triggersAndTurns(store, sessionId)
          if (turns.length < triggers.length) return undefined
        }
        return true
      })

    // The old deployment: the first engine ever records its count; after a change, the engines run with the count recorded.
    const recordedBefore = await recordedPartitionCount(storage.db)
    const old = runner(from)
    await old.start()
    t.equal(await recordedPartitionCount(storage.db), from, recordedBefore === undefined ? 'the first engine to start records its count' : 'the old deployment runs with the recorded count')
    const greeted = await createSessions()
    await settled(greeted)
    await old.stop()

    // Turns written while no engine ran, then one engine process that drove only `ahead` before it stopped.
    const waiting = await createSessions()
    for (const sessionId of greeted) await call(`/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'hello' } })
    const partial = { count: from, held: ahead }
    await old.worker.start(partial)
    await settled([...greeted, ...waiting], partial)
    await old.worker.stop()
    const head = await store.headPosition({ streamPrefixes: ['session-'] })
    await advanceCheckpoints(storage.db, ahead.map(partitionCheckpoint), head)
    const behind = everyPartition(from).filter((p) => !ahead.includes(p))
    const stored = await readCheckpoints(storage.db, everyPartition(from).map(partitionCheckpoint))
    t.ok(
      behind.every((p) => comparePositions(stored.get(partitionCheckpoint(p)) ?? START, head) < 0),
      `partitions ${behind.join(', ')} stopped before the turns waiting for them, ${ahead.join(', ')} after every turn`,
    )

    // The new deployment, with another count.
    const refused = runner(to)
    await t.rejects(refused.start(), new PartitionCountMismatchError(from, to), 'an engine with another count refuses to start')
    const message = await refused.start().then(
      () => '',
      (error: unknown) => assertionMessage(error),
    )
    t.ok(message.includes(`ENGINE_PARTITIONS is ${to}`) && message.includes(`for ${from} partitions`) && message.includes(`flowd engine repartition --partitions ${to}`), 'the refusal names both counts and the command')
    t.equal(await recordedPartitionCount(storage.db), from, 'the refused engine changed nothing')

    const moved = await repartition(storage.db, to)
    t.match(moved, { from, to }, 'repartition reports both counts')
    t.equal(await recordedPartitionCount(storage.db), to, 'the new count is recorded')
    const after = await readCheckpoints(storage.db, everyPartition(Math.max(from, to)).map(partitionCheckpoint))
    t.same([...after.keys()].sort(), everyPartition(to).map(partitionCheckpoint).sort(), 'a checkpoint for each new partition, none for the others')
    t.ok([...after.values()].every((position) => comparePositions(position, moved.position) === 0), 'every new partition goes on from one position')

    const next = runner(to)
    await next.start()
    try {
      await settled([...greeted, ...waiting]).catch(() => t.fail('a session never got a turn it was waiting for'))
      const twice: string[] = []
      const missing: string[] = []
      for (const sessionId of [...greeted, ...waiting]) {
        const { triggers, turns } = await triggersAndTurns(store, sessionId)
        if (new Set(turns).size !== turns.length) twice.push(sessionId)
        if (triggers.some((trigger) => !turns.includes(trigger))) missing.push(sessionId)
        if (turns.join() !== triggers.slice(0, turns.length).join()) twice.push(sessionId)
      }
      t.same(missing, [], 'every session has a turn for every trigger')
      t.same(twice, [], 'no turn twice, each in its order')
    } finally {
      await next.stop()
    }
  }

  await t.test('lowering the partition count (4 to 2)', (t) => changeCount(t, 4, 2, [0, 1]))
  await t.test('raising the partition count (2 to 4)', (t) => changeCount(t, 2, 4, [0]))
}

for (const backend of reachableBackends) {
  t.test(`changing the partition count on ${backend.name}`, (t) => changeCounts(t, backend))

  t.test(`a database whose checkpoints predate the recorded count, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    await advanceCheckpoints(storage.db, everyPartition(8).map(partitionCheckpoint), { commit: 10n, prepare: 10n })
    await t.rejects(checkPartitionCount(storage.db, 16), new PartitionCountMismatchError(8, 16), 'the count its checkpoints show is taken, and another refused')
    t.equal(await recordedPartitionCount(storage.db), 8)
    await checkPartitionCount(storage.db, 8)
    t.pass('the same count starts')
  })
}
