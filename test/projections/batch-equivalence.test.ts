import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import { invalidReplyWarning } from '../../src/domain/turn.js'
import { START, type RecordedEvent } from '../../src/eventstore/port.js'
import { analyticsCardStaysProjection } from '../../src/projections/analytics-card-stays.js'
import { analyticsModelCallsProjection } from '../../src/projections/analytics-model-calls.js'
import { analyticsSessionsProjection } from '../../src/projections/analytics-sessions.js'
import { analyticsTransfersProjection } from '../../src/projections/analytics-transfers.js'
import { cardsProjection } from '../../src/projections/cards.js'
import type { Fold, FoldOptions, Projection } from '../../src/projections/projection.js'
import { applyLive } from '../../src/projections/checkpoints.js'
import { sessionLogsProjection } from '../../src/projections/session-logs.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import type { Database } from '../../src/store/database.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { reachableBackends, type Backend } from '../helpers/storage.js'
import { testEverything } from '../helpers/test-scope.js'

// A projection's fold takes batches in memory and writes them in a few statements: one event alone
// (`apply`), one batch when live, a window of many in a rebuild, reading the stored rows it builds on
// outside the writing transaction as a rebuild does, while the window before is still being written.
// Whatever the events and however they are cut into batches and the batches into windows, it must
// leave exactly the rows that the same events leave folded one at a time, each written before the
// next is folded: what the fold merges across events must come out as the events in turn. The
// events are generated as a valid history: sessions start before their messages and turns and stop
// changing once they end, cards are created before they change and change no more once deleted.

/**
 * Histories each property checks on each store: store i draws them from seed FUZZ_SEED + i, so the
 * stores between them check twice as many, and the run prints FUZZ_SEED (`FUZZ_SEED=n` replays it).
 * `TEST_EVERYTHING=1` checks ten times as many.
 */
const RUNS = testEverything ? 250 : 25
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124)
t.comment(`FUZZ_SEED=${SEED}: ${RUNS} histories a property on each store`)
const seedOf = (backend: Backend) => SEED + reachableBackends.indexOf(backend)
const BATCHED: Projection[] = [sessionLogsProjection, analyticsSessionsProjection, analyticsTransfersProjection, analyticsModelCallsProjection, cardsProjection, analyticsCardStaysProjection, webhookOutboxProjection]
/** Tables a projection writes beyond the ones a rebuild empties: the outbox's deliveries survive rebuilds. */
const ALSO_WRITES: Record<string, string[]> = { [webhookOutboxProjection.name]: ['webhook_deliveries'] }
const writtenBy = (projection: Projection) => [...projection.tables, ...(ALSO_WRITES[projection.name] ?? [])]

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `01a20247-${prefix}-7000-8000-${String(i + 1).padStart(12, '0')}`)
const [workspace, organization, flow, pipeline, apiKey] = ids('0000', 5) as [string, string, string, string, string]
const stages = ids('5000', 3)
const fields = ids('f000', 3)
const nodes = ['start', 'ask', 'menu', 'end']

/** One step of the history: what to do to which session or card, with the generated details. */
const step = fc.record({
  target: fc.nat(5),
  kind: fc.nat(9),
  visited: fc.array(fc.constantFrom(...nodes), { maxLength: 5 }),
  invalid: fc.boolean(),
  transfers: fc.nat(2),
  status: fc.constantFrom('active', 'active', 'completed', 'error'),
  stage: fc.constantFrom(...stages),
  values: fc.dictionary(fc.constantFrom(...fields), fc.oneof(fc.integer({ min: -50, max: 50 }), fc.constantFrom('alpha', 'beta'), fc.boolean()), { maxKeys: 3 }),
  tags: fc.uniqueArray(fc.constantFrom('vip', 'new', 'late'), { maxLength: 2 }),
  /** Messages the turn sends; a card's session (by index; 6 and up: none); who made a card event. */
  sent: fc.nat(2),
  cardSession: fc.nat(9),
  byEngine: fc.boolean(),
  callback: fc.boolean(),
})
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never

/** Turns steps into a valid event history over six sessions and six cards. */
function history(steps: readonly Step[]): RecordedEvent[] {
  const sessions = ids('1000', 6)
  const cards = ids('c000', 6)
  const sessionState = new Map<string, 'running' | 'ended'>()
  const cardState = new Map<string, { stage: string; revision: bigint; tags: string[]; sessionId: string | null } | 'deleted'>()
  const revisions = new Map<string, bigint>()
  const events: RecordedEvent[] = []
  let second = 0
  let micros = 1_795_000_000_000_000
  const at = () => new Date(Date.UTC(2026, 10, 24, 8, 0, second++)).toISOString()
  const push = (stream: string, type: string, data: Record<string, unknown>, actor = 'api-key') => {
    const revision = revisions.get(stream) ?? 0n
    revisions.set(stream, revision + 1n)
    const position = BigInt(events.length + 1)
    events.push({ id: randomUUID(), type, data, metadata: { actor }, stream, revision, position: { commit: position, prepare: position }, createdAt: at() })
    return revision
  }
  for (const s of steps) {
    if (s.kind < 6) {
      const sessionId = sessions[s.target]!
      const stream = `session-${sessionId}`
      const state = sessionState.get(sessionId)
      if (state === undefined) {
        sessionState.set(sessionId, 'running')
        push(stream, 'SessionStarted', {
          sessionId, workspaceId: workspace, organizationId: organization, flowId: flow, flowVersion: 1, externalId: null, startedAt: at(), expiresAt: at(),
          apiKeyId: apiKey, callbackUrl: s.callback ? 'https://hooks.example.com/flows' : null,
        })
      } else if (state === 'running') {
        if (s.kind === 0) {
          sessionState.set(sessionId, 'ended')
          if (s.invalid) push(stream, 'TurnFailed', { sessionId, messageId: randomUUID(), reason: 'engine_error', failedAt: at(), timestamp: micros++ })
          else push(stream, 'SessionExpired', { sessionId, expiredAt: at() })
        } else if (s.kind === 1) push(stream, 'MessageReceived', { sessionId, expiresAt: at() })
        else {
          if (s.status !== 'active') sessionState.set(sessionId, 'ended')
          const functions = Array.from({ length: s.transfers }, (_, i) => ({ type: 'transfer', targetType: i === 0 ? 'sector' : 'agent', targetId: `target-${i}`, timestamp: micros++ }))
          const warnings = s.invalid && s.visited[0] ? [invalidReplyWarning(s.visited[0])] : []
          const messages = Array.from({ length: s.sent }, (_, i) => ({ type: 'text', text: { body: `reply ${i}` }, nodeId: s.visited[0] ?? 'start' }))
          // A model call per message sent, as a reply step makes: models alternate, so a turn may call two.
          const modelCalls = messages.map((_, i) => ({ nodeId: 'ask', connectionId: 'ai', model: (s.target + i) % 2 === 0 ? 'small' : 'large', promptTokens: 10 + i, completionTokens: 1 + s.transfers, durationMs: 5 }))
          const output = { status: s.status, visited: s.visited, warnings, functions, messages, kanban: [], ...(modelCalls.length > 0 && { modelCalls }) }
          push(stream, 'TurnCompleted', { sessionId, messageId: randomUUID(), completedAt: at(), output })
        }
      }
      continue
    }
    const cardId = cards[s.target]!
    const stream = `card-${cardId}`
    const card = cardState.get(cardId)
    if (card === 'deleted') continue
    const sessionId = card === undefined ? (sessions[s.cardSession] ?? null) : card.sessionId
    const actor = s.byEngine ? 'engine' : 'api-key'
    if (card === undefined) {
      const revision = push(stream, 'CardCreated', { cardId, pipelineId: pipeline, workspaceId: workspace, stageId: s.stage, sessionId, values: s.values, tags: s.tags, createdAt: at() }, actor)
      cardState.set(cardId, { stage: s.stage, revision, tags: s.tags, sessionId })
    } else if (s.kind === 6) {
      push(stream, 'CardUpdated', { cardId, pipelineId: pipeline, stageId: card.stage, sessionId, changedFieldIds: Object.keys(s.values), tagsChanged: true, values: s.values, tags: s.tags, updatedAt: at() }, actor)
      card.tags = s.tags
    } else if (s.kind === 7 && s.stage !== card.stage) {
      push(stream, 'CardStageChanged', { cardId, pipelineId: pipeline, stageId: s.stage, previousStageId: card.stage, sessionId, tags: card.tags, movedAt: at() }, actor)
      card.stage = s.stage
    } else if (s.kind === 8) {
      push(stream, 'CardDeleted', { cardId, pipelineId: pipeline, stageId: card.stage, sessionId, tags: card.tags, deletedAt: at() }, actor)
      cardState.set(cardId, 'deleted')
    } else if (s.kind === 9) {
      push(`pipeline-${pipeline}`, 'PipelineUpdated', { pipelineId: pipeline, workspaceId: workspace, name: 'Sales', stages: [], fields: [], removedStageIds: [], removedFieldIds: [fields[s.target % fields.length]], updatedAt: at() })
    }
  }
  return events
}

async function snapshot(db: Kysely<Database>, projection: Projection): Promise<Record<string, string[]>> {
  const snap: Record<string, string[]> = {}
  for (const table of writtenBy(projection)) snap[table] = await readModelRows(db, table)
  return snap
}

/** Deletes rather than truncates: a truncate makes new files for the table, several times the cost of a case's writes. */
async function empty(db: Kysely<Database>, projection: Projection): Promise<void> {
  for (const table of writtenBy(projection)) await sql`delete from ${sql.table(table)}`.execute(db)
}

/** The rows `projection` leaves when it applies `events` one by one, each the fold of one; its tables are emptied again after. */
async function appliedOneByOne(db: Kysely<Database>, projection: Projection, events: readonly RecordedEvent[]): Promise<Record<string, string[]>> {
  await empty(db, projection)
  await db.transaction().execute(async (trx) => {
    for (const event of events) await projection.apply(trx, event)
  })
  const rows = await snapshot(db, projection)
  await empty(db, projection)
  return rows
}

/** Cuts `items` into consecutive runs of the given sizes (the last takes the rest). */
function cut<T>(items: readonly T[], sizes: readonly number[]): T[][] {
  const runs: T[][] = []
  let from = 0
  for (const size of sizes) {
    if (from >= items.length) break
    runs.push(items.slice(from, from + size))
    from += size
  }
  if (from < items.length) runs.push(items.slice(from))
  return runs
}

/**
 * Folds each window's batches and writes the window in one transaction, as a rebuild does: the next
 * window folds before the one before it is written (here: wholly before, the hardest order for a
 * fold that reads stored rows).
 */
async function applyInWindows(db: Kysely<Database>, projection: Projection, windows: RecordedEvent[][][], options: FoldOptions = {}): Promise<void> {
  let writing: Fold | undefined
  for (const window of windows) {
    const fold = projection.fold!({ ...options, writing })
    for (const batch of window) await fold.add(db, batch)
    if (writing) await db.transaction().execute((trx) => writing!.write(trx))
    writing = fold
  }
  if (writing) await db.transaction().execute((trx) => writing!.write(trx))
}

// A projection reads 5 to 15 events of a history: batches this small cut most of them into several
// windows of several batches.
const batchSizes = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 10 })
const windowSizes = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 6 })

/**
 * One database a backend for the whole file, closed when the file ends: the tests run one after
 * another, and every case empties the tables it compares before it writes.
 */
const databases = new Map<Backend, Promise<Kysely<Database>>>()
const databaseOf = (backend: Backend) => {
  if (!databases.has(backend)) databases.set(backend, backend.open(t).then((storage) => storage.db))
  return databases.get(backend)!
}

const readsStream = (projection: Projection, event: RecordedEvent) => projection.streamPrefixes.some((prefix) => event.stream.startsWith(prefix))

for (const backend of reachableBackends) {
  t.test(`batches and windows leave the rows that the events folded one at a time leave (${backend.name})`, async (t) => {
    const db = await databaseOf(backend)
    for (const projection of BATCHED) {
      let compared = 0
      let severalWindows = 0
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 80 }), batchSizes, windowSizes, async (steps, sizes, windowed) => {
          const events = history(steps).filter((event) => readsStream(projection, event))
          const oneByOne = await appliedOneByOne(db, projection, events)
          const windows = cut(cut(events, sizes), windowed)
          if (windows.length > 1) severalWindows++
          await applyInWindows(db, projection, windows)
          const batched = await snapshot(db, projection)
          if (Object.values(oneByOne).some((rows) => rows.length > 0)) compared++
          // Thrown, so fast-check shrinks a failing history to a small one before tap reports it.
          assert.deepStrictEqual(batched, oneByOne, `${projection.name}: ${events.length} events in batches of ${sizes.join(', ') || 'one'}, windows of ${windowed.join(', ') || 'one'} batches`)
        }),
        { numRuns: RUNS, seed: seedOf(backend) },
      )
      t.pass(`${projection.name}: ${RUNS} histories, the same rows folded in batches and windows and one event at a time`)
      t.ok(compared > RUNS / 2, `${projection.name}: most histories left rows to compare (${compared} of ${RUNS})`)
      t.ok(severalWindows > RUNS / 3, `${projection.name}: many histories were folded in several windows (${severalWindows} of ${RUNS})`)
    }
  })
}

/** Deliveries as stored, by the event they report. */
const deliveries = async (db: Kysely<Database>) =>
  (await db.selectFrom('webhook_deliveries').select(['event_ids', 'body', 'status']).execute()).map((row) => JSON.stringify(row)).sort()

for (const backend of reachableBackends) {
  t.test(`a rebuild's replay of the outbox makes no delivery again for what it applied before (${backend.name})`, async (t) => {
    const db = await databaseOf(backend)
    const projection = webhookOutboxProjection
    let withDeliveriesOnBothSides = 0
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 80 }), fc.nat(), batchSizes, windowSizes, async (steps, cutAt, sizes, windowed) => {
        const events = history(steps).filter((event) => readsStream(projection, event))
        const before = events.slice(0, cutAt % (events.length + 1))
        const appliedBefore = before.at(-1)?.position
        await empty(db, projection)
        await db.transaction().execute(async (trx) => {
          for (const event of events) await projection.apply(trx, event)
        })
        const routes = await readModelRows(db, 'webhook_sessions')
        const all = await deliveries(db)
        await empty(db, projection)
        await db.transaction().execute(async (trx) => {
          for (const event of before) await projection.apply(trx, event)
        })
        const madeBefore = await deliveries(db)
        // Deleted since (as by an operator): a replay must not make them, and so send them, again.
        await sql`delete from webhook_deliveries`.execute(db)
        await sql`delete from webhook_sessions`.execute(db)
        await applyInWindows(db, projection, cut(cut(events, sizes), windowed), { appliedBefore })
        if (madeBefore.length > 0 && madeBefore.length < all.length) withDeliveriesOnBothSides++
        assert.deepStrictEqual(await readModelRows(db, 'webhook_sessions'), routes, 'the routes, all of them')
        assert.deepStrictEqual(await deliveries(db), all.filter((row) => !madeBefore.includes(row)), 'only the deliveries of events after the checkpoint')
      }),
      { numRuns: RUNS, seed: seedOf(backend) },
    )
    t.pass(`${RUNS} histories cut at a checkpoint: the routes rebuilt, the deliveries before it not made again`)
    t.ok(withDeliveriesOnBothSides > RUNS / 4, `most cuts had deliveries on both sides (${withDeliveriesOnBothSides} of ${RUNS})`)
  })
}

/** The projections whose live batches are one statement; `fallsBack`: some batches of the histories need a transaction. */
const IN_ONE_STATEMENT = [
  { projection: webhookOutboxProjection, fallsBack: true },
  { projection: sessionLogsProjection, fallsBack: true },
  { projection: analyticsTransfersProjection, fallsBack: false },
  { projection: analyticsModelCallsProjection, fallsBack: false },
]

for (const backend of reachableBackends) for (const { projection, fallsBack } of IN_ONE_STATEMENT) {
  t.test(`${projection.name}: live batches written in one statement with their checkpoint leave the same rows (${backend.name})`, async (t) => {
    const db = await databaseOf(backend)
    let inOneStatement = 0
    let inTransactions = 0
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 80 }), batchSizes, async (steps, sizes) => {
        const events = history(steps).filter((event) => readsStream(projection, event))
        const oneByOne = await appliedOneByOne(db, projection, events)
        await sql`delete from projection_checkpoints`.execute(db)
        await db.insertInto('projection_checkpoints').values({ projection: projection.name, position_commit: String(START.commit), position_prepare: String(START.prepare) }).execute()
        let from = START
        for (const batch of cut(events, sizes)) {
          const fold = projection.fold!()
          await fold.add(db, batch)
          if (fold.inOneStatement!(sql`true`)) inOneStatement++
          else inTransactions++
          // A reader the checkpoint has moved past (another process took over) writes nothing.
          const before = await snapshot(db, projection)
          const stale = await applyLive(db, projection, { commit: from.commit - 1n, prepare: from.prepare - 1n }, batch, batch.at(-1)!.position)
          assert.equal(stale.applied, false, 'a stale reader applies nothing')
          assert.deepStrictEqual(await snapshot(db, projection), before, 'a stale reader writes nothing')
          const outcome = await applyLive(db, projection, from, batch, batch.at(-1)!.position)
          assert.deepStrictEqual(outcome, { applied: true, position: batch.at(-1)!.position })
          from = outcome.position
        }
        assert.deepStrictEqual(await snapshot(db, projection), oneByOne, `${events.length} events in batches of ${sizes.join(', ')}`)
        const [checkpoint] = await db.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).execute()
        assert.equal(BigInt(checkpoint!.position_commit), from.commit, 'the checkpoint moved with the last batch')
      }),
      { numRuns: RUNS, seed: seedOf(backend) },
    )
    t.pass(`${RUNS} histories in live batches: the rows the events folded one at a time leave, a stale reader writing nothing`)
    t.ok(inOneStatement > RUNS && (inTransactions > 0) === fallsBack, `batches in one statement (${inOneStatement}) and in a transaction (${inTransactions})`)
  })
}
