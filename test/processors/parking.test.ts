import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurn } from '../../src/engine/interpreter.js'
import { ENGINE_PROCESSOR, EngineWorker, type Interpreter, type KanbanApplier } from '../../src/engine/worker.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { listParked } from '../../src/processors/parked-streams.js'
import type { Projection } from '../../src/projections/projection.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { retryParkedStream } from '../../src/projections/checkpoints.js'
import type { Database } from '../../src/store/database.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { runCli } from '../helpers/cli.js'
import { sessionsOn } from '../helpers/session-events.js'
import { createTestDatabase, postgresUrl, reachableBackends, type Backend } from '../helpers/storage.js'
import { openStorage, type Storage } from '../../src/store/connect.js'
import { migrateToLatest } from '../../src/store/migrate.js'

/** A deterministic fault: every try on an event of `stream` throws, while `on`. */
class Fault {
  on = true
  tries = 0
  readonly stream: string

  constructor(stream: string) {
    this.stream = stream
  }
  hit(events: readonly RecordedEvent[]): void {
    if (!this.on || !events.some((event) => event.stream === this.stream)) return
    this.tries++
    throw new Error(`injected fault on ${this.stream}`)
  }
}

/** `projection` failing on every event of the fault's stream, in its event-by-event path and in its fold alike. */
function faulty(projection: Projection, fault: Fault): Projection {
  const { fold } = projection
  return {
    ...projection,
    async apply(trx, event) {
      fault.hit([event])
      await projection.apply(trx, event)
    },
    ...(fold && {
      fold: (options) => {
        const inner = fold(options)
        return {
          add: async (db, events) => {
            fault.hit(events)
            await inner.add(db, events)
          },
          get rowsHeld() {
            return inner.rowsHeld
          },
          write: (trx) => inner.write(trx),
          ...(inner.inOneStatement && { inOneStatement: (checkpointMoved) => inner.inOneStatement!(checkpointMoved) }),
        }
      },
    }),
  }
}

const waitUntil = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

/** Counts how often each event is applied: any count above 1 is a double application. */
const countingProjection: Projection = {
  name: 'counting',
  streamPrefixes: ['tick-'],
  tables: ['applied_counts' as keyof Database & string],
  async apply(trx, event) {
    await sql`insert into applied_counts (event_id, stream, n) values (${event.id}, ${event.stream}, 1)
      on conflict (event_id) do update set n = applied_counts.n + 1`.execute(trx)
  },
}

/**
 * One database a store for the read model's and the outbox's parking, closed when the file ends:
 * they run one after the other, on streams of their own (`tick-`, `session-`), each with a runtime
 * of its own projection alone, and the read model's case leaves nothing parked.
 */
const parkingDatabases = new Map<Backend, Promise<Storage>>()
const parkingDatabaseOf = (backend: Backend) => {
  if (!parkingDatabases.has(backend)) parkingDatabases.set(backend, backend.open(t))
  return parkingDatabases.get(backend)!
}

for (const backend of reachableBackends) {
  t.test(`a read model parks the stream it fails on, on ${backend.name}`, async (t) => {
    const storage = await parkingDatabaseOf(backend)
    const { db } = storage
    await sql`create table applied_counts (event_id uuid primary key, stream text not null, n int not null)`.execute(db)
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    let appended = 0
    const tick = async (stream: string, count = 1) => {
      for (let i = 0; i < count; i++) {
        await store.append(stream, [{ id: randomUUID(), type: 'Ticked', data: { i: appended++ } }], { expectedRevision: 'any' })
      }
    }
    const applied = async () => {
      const { rows } = await sql<{ stream: string; events: number; doubled: number }>`
        select stream, count(*)::int as events, count(*) filter (where n <> 1)::int as doubled from applied_counts group by stream order by stream`.execute(db)
      return Object.fromEntries(rows.map((row) => [row.stream, { events: row.events, doubled: row.doubled }]))
    }

    const fault = new Fault('tick-poisoned')
    for (let round = 0; round < 5; round++) {
      await tick('tick-a')
      await tick('tick-poisoned')
      await tick('tick-b')
    }
    const runtime = new ProjectionRuntime(db, store, [faulty(countingProjection, fault)], silentLogger)
    await runtime.start()
    t.teardown(() => runtime.stop())

    await waitUntil(async () => (await listParked(db, 'counting')).length === 1, 'the stream is parked')
    await tick('tick-a', 3)
    await tick('tick-poisoned', 2)
    await tick('tick-b', 3)
    await waitUntil(async () => (await applied())['tick-b']?.events === 8, 'the other streams caught up')
    t.same(await applied(), { 'tick-a': { events: 8, doubled: 0 }, 'tick-b': { events: 8, doubled: 0 } }, 'every other stream goes on; the parked one waits')

    const [parked] = await listParked(db)
    const [firstPoisoned] = await store.readStream('tick-poisoned')
    t.equal(parked?.processor, 'counting')
    t.equal(parked?.stream, 'tick-poisoned')
    t.equal(parked?.eventId, firstPoisoned?.id, 'parked at its first event')
    t.match(parked?.reason, /injected fault on tick-poisoned/)
    t.ok(fault.tries >= 3, 'tried more than once before parking')

    const live = faulty(countingProjection, fault)
    await t.rejects(retryParkedStream(db, store, live, 'tick-poisoned'), /injected fault/, 'a retry while the fault is there fails')
    t.equal((await listParked(db)).length, 1, 'and leaves the stream parked')

    fault.on = false
    t.equal(await retryParkedStream(db, store, live, 'tick-poisoned'), true, 'the fault removed, the retry replays the stream')
    t.same(await listParked(db), [], 'and takes it off the list')
    t.same((await applied())['tick-poisoned'], { events: 7, doubled: 0 }, 'every waiting event applied once')
    t.equal(await retryParkedStream(db, store, live, 'tick-poisoned'), false, 'a stream not parked is not replayed')

    await tick('tick-poisoned', 2)
    await tick('tick-a')
    await waitUntil(async () => (await applied())['tick-poisoned']?.events === 9 && (await applied())['tick-a']?.events === 9, 'the live runtime applies it again')
    t.same(
      await applied(),
      { 'tick-a': { events: 9, doubled: 0 }, 'tick-b': { events: 8, doubled: 0 }, 'tick-poisoned': { events: 9, doubled: 0 } },
      'the live runtime applies its new events, nothing lost or doubled',
    )
  })
}

type Turn = Extract<SessionEvent, { type: 'TurnCompleted' | 'TurnFailed' }>

for (const backend of reachableBackends) {
  t.test(`the engine isolates a session it cannot serve, on ${backend.name}`, async (t) => {
    const { app, admin, store, storage } = await openTestApp(t, backend, { engine: false })
    const api = async (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload && { payload }) })
    const created = async (url: string, payload: object) => {
      const response = await api('POST', url, payload)
      if (response.statusCode !== 201) throw new Error(`${url} answered ${response.statusCode}`)
      return response.json()
    }
    await created('/v1/variables', { name: 'said', type: 'string' })
    const flow = await created('/v1/flows', { name: 'Echo', definition: echoFlow })
    const start = async (): Promise<string> => (await created(`/v1/sessions/flows/${flow.id}/create`, {})).sessionId
    const [broken, healthy, carded] = [await start(), await start(), await start()]
    const turnsOf = async (sessionId: string) =>
      (await store.readStream(sessionStream(sessionId))).filter((e) => e.type === 'TurnCompleted' || e.type === 'TurnFailed') as unknown as Turn[]

    // A bug that strikes one session's turns, and a kanban applier that fails on another's card.
    const interpret: Interpreter = (runnable, state, trigger, context) => {
      if (context.system.sessionId === broken) throw new Error('the interpreter failed')
      const output = runTurn(runnable, state, trigger, context)
      if (context.system.sessionId !== carded) return output
      const card = { action: 'create' as const, cardId: randomUUID(), pipelineId: randomUUID(), stageId: randomUUID(), previousStageId: null, values: {}, tags: [], timestamp: context.nowMicros, nodeId: 'ask' }
      return { ...output, kanban: [card] }
    }
    const kanbanFault = new Fault(sessionStream(carded))
    const kanbanCalls: string[] = []
    const applyKanban: KanbanApplier = async (turn) => {
      kanbanFault.hit([{ stream: sessionStream(turn.sessionId) } as RecordedEvent])
      kanbanCalls.push(turn.messageId)
    }
    const worker = new EngineWorker(storage.db, store, new FlowVersions(store), interpret, applyKanban, silentLogger)
    await worker.start()
    t.teardown(() => worker.stop())

    await waitUntil(async () => (await turnsOf(broken)).length === 1 && (await turnsOf(healthy)).length === 1, 'the start turns')
    const [failed] = await turnsOf(broken)
    t.equal(failed?.type, 'TurnFailed', 'the session whose turn cannot be completed gets TurnFailed')
    t.equal(failed?.type === 'TurnFailed' && failed.data.reason, 'engine_error', 'with a reason code')
    const detail = (await api('GET', `/v1/sessions/${broken}`)).json()
    t.equal(detail.status, 'error', 'the session shows error')
    t.equal(detail.failureReason, 'engine_error')
    t.equal((await api('POST', `/v1/sessions/${broken}/message`, { type: 'text', text: { body: 'hello?' } })).statusCode, 409, 'later messages get 409')
    await waitUntil(async () => (await api('GET', `/v1/sessions/logs?status=error`)).json().content.length === 1, 'the log shows it')
    t.equal((await api('GET', `/v1/sessions/logs?status=error`)).json().content[0].id, broken, 'the session log says error')
    await waitUntil(async () => (await api('GET', `/v1/sessions/${broken}/events`)).json().content.at(-1).webhookDelivery !== null, 'its webhook is made')
    const failedEntry = (await api('GET', `/v1/sessions/${broken}/events`)).json().content.at(-1)
    t.equal(failedEntry.type, 'TurnFailed')
    const delivery = (await api('GET', `/v1/webhooks/deliveries/${failedEntry.webhookDelivery.id}`)).json()
    t.same(
      delivery.body.changes.map((change: { field: string; value: { functions?: { type: string }[]; events?: { type: string; payload: object }[] } }) => [change.field, change.value.functions?.[0]?.type ?? change.value.events?.[0]]),
      [
        ['function', 'finish'],
        ['event', { domain: 'session', type: 'session.failed', payload: { reason: 'engine_error' }, timestamp: failed?.type === 'TurnFailed' ? failed.data.timestamp : undefined }],
      ],
      'the integrator is told: finish, and session.failed with the reason',
    )

    await waitUntil(async () => (await listParked(storage.db, ENGINE_PROCESSOR)).length === 1, 'the kanban fault parks its session')
    const [parked] = await listParked(storage.db)
    t.equal(parked?.stream, sessionStream(carded), 'the session whose kanban actions fail is parked')
    t.equal(parked?.eventType, 'TurnCompleted')
    await api('POST', `/v1/sessions/${carded}/message`, { type: 'text', text: { body: 'waiting' } })
    await api('POST', `/v1/sessions/${healthy}/message`, { type: 'text', text: { body: 'still here' } })
    await waitUntil(async () => (await turnsOf(healthy)).length === 2, 'the healthy session gets its turn')
    t.equal((await turnsOf(carded)).length, 1, 'the parked session waits: no turn for its new message')

    kanbanFault.on = false
    t.equal(await worker.retryParked(sessionStream(carded)), true, 'the fault removed, a retry replays it')
    t.same(await listParked(storage.db), [], 'and takes it off the list')
    const cardedTurns = await turnsOf(carded)
    t.equal(cardedTurns.length, 2, 'its waiting message got its turn')
    // The new turn is the live engine's, as every turn written after its checkpoint.
    await waitUntil(async () => kanbanCalls.length === 2, 'the new turn’s kanban actions are carried out')
    t.same(kanbanCalls, cardedTurns.map((turn) => turn.data.messageId), 'each turn’s kanban actions carried out once')

    await api('POST', `/v1/sessions/${carded}/message`, { type: 'text', text: { body: 'live again' } })
    await waitUntil(async () => (await turnsOf(carded)).length === 3, 'the live engine serves it again')
    // The engine carries out a turn's kanban actions after appending it.
    await waitUntil(async () => kanbanCalls.length === 3, 'and carries out its kanban actions')
    t.same(kanbanCalls, (await turnsOf(carded)).map((turn) => turn.data.messageId), 'once for each turn')
  })
}


for (const backend of reachableBackends) {
  t.test(`the webhook outbox parks the session it fails on, on ${backend.name}`, async (t) => {
    const storage = await parkingDatabaseOf(backend)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)

    const [poisoned, a, b] = [await startSession(), await startSession(), await startSession()]
    for (const sessionId of [poisoned, a, b]) await say(sessionId, 'hello')
    const fault = new Fault(sessionStream(poisoned))
    const outbox = faulty(webhookOutboxProjection, fault)
    const runtime = new ProjectionRuntime(db, store, [outbox], silentLogger)
    await runtime.start()
    t.teardown(() => runtime.stop())

    await waitUntil(async () => (await listParked(db, 'webhook-outbox')).length === 1, 'the session is parked')
    for (const sessionId of [poisoned, a, b]) await say(sessionId, 'again')
    await waitUntil(async () => (await deliveries())[b] === 2, 'the other sessions go on')
    t.same(await deliveries(), { [a]: 2, [b]: 2 }, 'every other session gets its webhooks; the parked one none yet')

    fault.on = false
    t.equal(await retryParkedStream(db, store, outbox, sessionStream(poisoned)), true, 'the fault removed, a retry replays it')
    t.same(await deliveries(), { [a]: 2, [b]: 2, [poisoned]: 2 }, 'its webhooks are made, once each')
    await say(poisoned, 'live')
    await waitUntil(async () => (await deliveries())[poisoned] === 3, 'the live outbox serves it again')
    t.same(await deliveries(), { [a]: 2, [b]: 2, [poisoned]: 3 }, 'nothing lost or doubled')
  })
}

t.test('flowd processors lists parked streams and replays one', { skip: postgresUrl ? false : 'DATABASE_URL is not set' }, async (t) => {
  const database = await createTestDatabase()
  const storage = await openStorage({ kind: 'postgres', url: database.url })
  t.teardown(async () => {
    await storage.close()
    await database.drop()
  })
  await migrateToLatest(storage.db)
  const store = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 50 })
  t.teardown(() => store.close())
  const { startSession, say, deliveries } = sessionsOn(store, storage.db)
  const [poisoned, healthy] = [await startSession(), await startSession()]
  for (const sessionId of [poisoned, healthy]) await say(sessionId, 'hello')
  const runtime = new ProjectionRuntime(storage.db, store, [faulty(webhookOutboxProjection, new Fault(sessionStream(poisoned)))], silentLogger)
  await runtime.start()
  await waitUntil(async () => (await listParked(storage.db)).length === 1, 'the session is parked')
  await runtime.stop()

  const env = { DATABASE_URL: database.url }
  const listed = await runCli(['processors', 'parked', '--json'], env)
  t.equal(listed.code, 0)
  const [row] = JSON.parse(listed.stdout) as { processor: string; stream: string; eventType: string; reason: string }[]
  t.same([row?.processor, row?.stream, row?.eventType], ['webhook-outbox', sessionStream(poisoned), 'SessionStarted'], 'the parked stream, with the event it stopped at')
  t.match(row?.reason, /injected fault/)
  t.equal((await runCli(['processors', 'retry', 'session-unknown'], env)).code, 3, 'a stream nobody parked: not found')

  const retried = await runCli(['processors', 'retry', sessionStream(poisoned)], env)
  t.equal(retried.code, 0, 'the service without the fault replays it')
  t.match(retried.stdout, /webhook-outbox: .* replayed and no longer parked/)
  t.same(await listParked(storage.db), [])
  t.equal((await deliveries())[poisoned], 1, 'its webhook is made, once')
  t.equal((await runCli(['processors', 'parked'], env)).stdout, 'no parked streams\n')
})
