import { setMaxListeners } from 'node:events'
import { getHeapStatistics } from 'node:v8'
import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Logger } from '../logger.js'
import { START, comparePositions, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { readStreamThrough } from '../eventstore/postgres.js'
import type { WakeUp } from '../eventstore/wake-up.js'
import { toBigInt, type Database, type DbOrTrx } from '../store/database.js'
import { whileLeased, type Leases } from '../store/lease.js'
import { prepared } from '../store/prepared.js'
import type { Metrics } from '../metrics/registry.js'
import { FAILURES_BEFORE_PARKING, backoffMs, isTransient } from '../processors/failures.js'
import { StreamParking, listParked, parkedStreamsOf, unpark, waitsBehind } from '../processors/parked-streams.js'
import { completeDeferred, deferKeptCounts, deferSecondaryIndexes, takeRebuildLeases } from './deferred-indexes.js'
import { applyAll, type Fold, type Projection } from './projection.js'

export interface ProjectionStatus {
  name: string
  position: Position
  /** It has applied the newest event of its streams, or did within the bound asked for. */
  caughtUp: boolean
  lastError: string | undefined
}

/** How far a read model is behind the event store. */
export interface ProjectionLag {
  name: string
  /** Events of its streams it has still to apply, counted up to the bound asked for. */
  eventsBehind: number
  /** When the oldest of them was written; undefined when it is caught up. */
  oldestPendingAt: Date | undefined
}

interface Running {
  projection: Projection
  /** Applied here, or as last read from the stored checkpoint when another process applies it. */
  position: Position
  lastError: string | undefined
  /** This process applies it now (on Postgres: holds its lease). */
  active: boolean
  /** Its streams stopped at an event that failed again and again; their events wait for a retry. */
  parking: StreamParking
}

export interface ProjectionRuntimeOptions {
  /**
   * One active reader per projection across processes, the others standing by (Postgres). Absent
   * (the embedded database, tests), every started runtime reads every projection.
   */
  leases?: Leases
  /** Announces this process's checkpoint moves to the others and wakes its waits on theirs (Postgres). */
  checkpointsMoved?: WakeUp
  metrics?: Metrics
}

interface Waiter {
  projections: string[]
  position: Position
  resolve(reached: boolean): void
}

const BATCH = 500
/**
 * A rebuild's batches: bigger, as nobody waits on them (a session's events then fall in fewer
 * batches, each writing its row once), and within the parameter limits of the batch writers'
 * multi-row inserts: at most 11 columns a row, 55,000 of PostgreSQL's 65,535 parameters.
 */
const REBUILD_BATCH = 5000
/** The NOTIFY channel on which processes announce that a projection's checkpoint moved. */
export const CHECKPOINTS_CHANNEL = 'flowd_checkpoints'
/** How often a wait on a projection applied by another process reads the checkpoints when no NOTIFY woke it. */
const STORED_CHECKPOINT_POLL_MS = 100

async function readCheckpoint(db: Kysely<Database> | Transaction<Database>, name: string): Promise<Position> {
  const row = await db.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).where('projection', '=', name).executeTakeFirst()
  return row ? { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) } : START
}

async function writeCheckpoint(trx: Transaction<Database>, name: string, position: Position): Promise<void> {
  await trx
    .insertInto('projection_checkpoints')
    .values({ projection: name, position_commit: String(position.commit), position_prepare: String(position.prepare) })
    .onConflict((oc) =>
      oc.column('projection').doUpdateSet({
        position_commit: String(position.commit),
        position_prepare: String(position.prepare),
        updated_at: sql`now()`,
      }),
    )
    .execute()
}

type BatchOutcome = { applied: true; position: Position } | { applied: false; position: Position }

/**
 * Writes events up to `reached` in one transaction with the checkpoint. The checkpoint moves first,
 * and only from where this reader started: if another process (or a rebuild) moved it, nothing is
 * written and the reader follows the stored position. The row lock the move takes serialises
 * readers of one projection, so each event reaches the read model once.
 */
async function writeWithCheckpoint(
  db: Kysely<Database>,
  projection: Projection,
  from: Position,
  reached: Position,
  write: (trx: Transaction<Database>) => Promise<void>,
  { waitForFlush = true } = {},
): Promise<BatchOutcome> {
  return db.transaction().execute(async (trx) => {
    if (!waitForFlush) await sql`set local synchronous_commit = off`.execute(trx)
    // Prepared: every batch of every read model runs it.
    const [moved] = (await trx.executeQuery(prepared(moveCheckpoint(trx, projection.name, from, reached).compile()))).rows
    if (!moved) return notMoved(trx, projection.name)
    await write(trx)
    return { applied: true, position: reached }
  })
}

/** Moves a projection's checkpoint to `reached`, only from `from`; returns a row if it moved. */
const moveCheckpoint = (db: DbOrTrx, name: string, from: Position, reached: Position) =>
  db
    .updateTable('projection_checkpoints')
    .set({ position_commit: String(reached.commit), position_prepare: String(reached.prepare), updated_at: sql`now()` })
    .where('projection', '=', name)
    .where(sql<boolean>`(position_commit, position_prepare) = (${String(from.commit)}::bigint, ${String(from.prepare)}::bigint)`)
    .returning('projection')

/** The checkpoint was not where the reader left it: the reader follows the stored one. */
async function notMoved(db: Kysely<Database> | Transaction<Database>, name: string): Promise<BatchOutcome> {
  // A projection's first batch ever: its row is made here, and the reader comes back from START.
  await insertCheckpointIfMissing(db, name)
  return { applied: false, position: await readCheckpoint(db, name) }
}

/**
 * A live batch with its checkpoint. When the projection's fold can put the whole write in one
 * statement, the checkpoint moves in that statement: one round trip where a transaction takes four
 * (begin, move, write, commit). The webhook outbox does, as every webhook waits on its batches.
 */
export async function applyLive(db: Kysely<Database>, projection: Projection, from: Position, batch: readonly RecordedEvent[]): Promise<BatchOutcome> {
  const reached = batch[batch.length - 1]!.position
  const fold = projection.fold?.()
  if (!fold?.inOneStatement) return writeWithCheckpoint(db, projection, from, reached, (trx) => applyAll(trx, projection, batch, fold))
  await fold.add(db, batch)
  const parts = fold.inOneStatement(sql<boolean>`exists (select 1 from moved)`)
  if (!parts) return writeWithCheckpoint(db, projection, from, reached, (trx) => fold.write(trx))
  const statement = sql<{ moved: number }>`
    with moved as (${moveCheckpoint(db, projection.name, from, reached)})${sql.join(parts.map((part, index) => sql`, ${sql.id(`write_${index}`)} as (${part})`), sql``)}
    select count(*)::int as moved from moved`
  const [row] = (await db.executeQuery(prepared(statement.compile(db)))).rows
  return row?.moved ? { applied: true, position: reached } : notMoved(db, projection.name)
}

async function insertCheckpointIfMissing(db: Kysely<Database> | Transaction<Database>, name: string): Promise<void> {
  await db
    .insertInto('projection_checkpoints')
    .values({ projection: name, position_commit: String(START.commit), position_prepare: String(START.prepare) })
    .onConflict((oc) => oc.column('projection').doNothing())
    .execute()
}

/**
 * Feeds every projection from the event store, each from its own checkpoint, and lets writers
 * wait until their events are visible in the read models (read-your-writes).
 */
export class ProjectionRuntime {
  private readonly running: Map<string, Running>
  private waiters: Waiter[] = []
  private readonly appliedListeners = new Set<(projection: string) => void>()
  private controller?: AbortController
  private loops: Promise<void>[] = []
  private followingStoredCheckpoints = false

  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: EventStore,
    readonly projections: readonly Projection[],
    private readonly logger: Logger,
    private readonly options: ProjectionRuntimeOptions = {},
  ) {
    this.running = new Map(
      projections.map((projection) => [
        projection.name,
        { projection, position: START, lastError: undefined, active: false, parking: new StreamParking(projection.name, logger, options.metrics) },
      ]),
    )
  }

  /** Starts reading every projection; on Postgres each one only while this process holds its lease. */
  async start(): Promise<void> {
    if (this.controller) return
    this.controller = new AbortController()
    const { signal } = this.controller
    // Every projection's lease, retry sleep and subscription listen to this one signal.
    setMaxListeners(3 * this.projections.length + 10, signal)
    for (const state of this.running.values()) {
      await insertCheckpointIfMissing(this.db, state.projection.name)
      this.loops.push(whileLeased(this.options.leases, `projection:${state.projection.name}`, signal, (leased) => this.run(state, leased), this.logger))
    }
  }

  /**
   * Applies batches from the checkpoint on. A failing batch is read again after a pause; one that
   * fails FAILURES_BEFORE_PARKING times in a row and not for a transient reason is applied event by
   * event, so the event that fails parks its stream and every other stream goes on (isolate).
   */
  private async run(state: Running, signal: AbortSignal): Promise<void> {
    const { projection } = state
    let failures = 0
    try {
      while (!signal.aborted) {
        try {
          // From the stored checkpoint: another process may have moved it while this one stood by.
          if (!state.active) {
            state.position = await readCheckpoint(this.db, projection.name)
            await state.parking.load(this.db)
            state.active = true
          }
          if (failures >= FAILURES_BEFORE_PARKING) {
            await this.isolate(state)
            failures = 0
            continue
          }
          for await (const batch of this.store.subscribeAll({ from: state.position, streamPrefixes: projection.streamPrefixes, signal, maxBatch: BATCH })) {
            const outcome = await this.applyBatch(state, batch)
            failures = 0
            state.position = outcome.position
            state.lastError = undefined
            this.settleWaiters()
            if (outcome.applied) this.announceApplied(projection.name)
            // Another reader moved the checkpoint: resubscribe from where it left it.
            if (!outcome.applied) break
          }
        } catch (error) {
          state.lastError = error instanceof Error ? error.message : String(error)
          failures = isTransient(error) ? 0 : failures + 1
          this.logger.error({ err: error, projection: projection.name, failures }, 'projection failed; retrying')
          await delay(backoffMs(Math.max(failures, 1), 1_000), undefined, { signal }).catch(() => {})
          state.active = false
        }
      }
    } finally {
      state.active = false
    }
  }

  private announceApplied(name: string): void {
    this.options.checkpointsMoved?.announce()
    for (const listener of this.appliedListeners) listener(name)
  }

  /** A live batch, less the events of parked streams (asked again under the checkpoint's lock, as a retry may have taken one off). */
  private applyBatch(state: Running, batch: RecordedEvent[]): Promise<BatchOutcome> {
    const { projection, parking } = state
    if (!parking.meets(batch)) return applyLive(this.db, projection, state.position, batch)
    return writeWithCheckpoint(this.db, projection, state.position, batch[batch.length - 1]!.position, async (trx) => {
      await parking.refresh(trx, batch)
      await applyAll(trx, projection, parking.passable(batch))
    })
  }

  /**
   * Applies the events after the checkpoint one at a time, each with its checkpoint's move, until it
   * has passed the one that failed the batch: that one is tried FAILURES_BEFORE_PARKING times, then
   * its stream is parked in the transaction that moves the checkpoint past it. Transient failures
   * end the isolation (the caller retries); the events applied stay applied.
   */
  private async isolate(state: Running): Promise<void> {
    const { projection, parking } = state
    const events = await this.store.readAll({ streamPrefixes: projection.streamPrefixes, from: state.position, limit: BATCH })
    for (const event of events) {
      const from = state.position
      let outcome: BatchOutcome | undefined
      let parked = false
      for (let failures = 1; !outcome; failures++) {
        try {
          outcome = await writeWithCheckpoint(this.db, projection, from, event.position, (trx) => (parking.waits(event) ? Promise.resolve() : applyAll(trx, projection, [event])))
        } catch (error) {
          if (isTransient(error)) throw error
          if (failures < FAILURES_BEFORE_PARKING) {
            await delay(backoffMs(failures))
            continue
          }
          outcome = await writeWithCheckpoint(this.db, projection, from, event.position, (trx) => parking.park(trx, event, error, failures)).catch((parkError: unknown) => {
            parking.forget(event.stream)
            throw parkError
          })
          if (outcome.applied) parked = true
          else parking.forget(event.stream)
        }
      }
      state.position = outcome.position
      if (!outcome.applied) return
      this.settleWaiters()
      this.announceApplied(projection.name)
      // The rest of the batch goes back to the live path.
      if (parked) return
    }
  }

  /** Whether this process applies the projection now (rather than another process, or nobody). */
  appliesHere(name: string): boolean {
    return this.running.get(name)?.active ?? false
  }

  /** Calls `listener` with a projection's name after each batch this process applies; returns the unsubscribe. */
  onApplied(listener: (projection: string) => void): () => void {
    this.appliedListeners.add(listener)
    return () => this.appliedListeners.delete(listener)
  }

  /**
   * Resolves true once every projection that reads `stream` (and acts on one of `eventTypes`, when
   * given) has applied the event at `position`, false when `timeoutMs` passes first (the write still
   * happened; the read model lags).
   */
  waitFor(stream: string, position: Position, options: { timeoutMs?: number; eventTypes?: readonly string[] } = {}): Promise<boolean> {
    const { timeoutMs = 2000, eventTypes } = options
    const affected = (p: Projection) =>
      matchesFilter(stream, { streamPrefixes: p.streamPrefixes }) && (!eventTypes || !p.eventTypes || eventTypes.some((type) => p.eventTypes!.includes(type)))
    return this.waitForProjections(this.projections.filter(affected).map((p) => p.name), position, timeoutMs)
  }

  private waitForProjections(names: string[], position: Position, timeoutMs: number): Promise<boolean> {
    if (this.reached(names, position)) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        projections: names,
        position,
        resolve: (reached) => {
          clearTimeout(timer)
          this.waiters = this.waiters.filter((w) => w !== waiter)
          resolve(reached)
        },
      }
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs)
      this.waiters.push(waiter)
      this.followStoredCheckpoints()
    })
  }

  private reached(names: string[], position: Position): boolean {
    return names.every((name) => {
      const state = this.running.get(name)
      return state !== undefined && comparePositions(state.position, position) >= 0
    })
  }

  private waitsOnOtherProcesses(): boolean {
    return this.waiters.some((waiter) => waiter.projections.some((name) => !this.running.get(name)?.active))
  }

  /**
   * While a wait involves a projection this process does not apply (the api role; a standby),
   * reads the stored checkpoints, again whenever another process announces a move (NOTIFY) and
   * at least every STORED_CHECKPOINT_POLL_MS. One loop serves every such wait of the process.
   */
  private followStoredCheckpoints(): void {
    if (this.followingStoredCheckpoints || !this.waitsOnOtherProcesses()) return
    this.followingStoredCheckpoints = true
    void (async () => {
      // The test and the flag's reset happen in one synchronous step, so no new wait is missed.
      while (this.waitsOnOtherProcesses()) {
        const generation = this.options.checkpointsMoved?.generation
        await this.readStoredCheckpoints().catch((error: unknown) => this.logger.debug({ err: error }, 'reading stored checkpoints failed'))
        this.settleWaiters()
        if (!this.waitsOnOtherProcesses()) break
        if (this.options.checkpointsMoved) await this.options.checkpointsMoved.wait(STORED_CHECKPOINT_POLL_MS, undefined, generation)
        else await delay(STORED_CHECKPOINT_POLL_MS)
      }
      this.followingStoredCheckpoints = false
    })()
  }

  /** Takes the stored checkpoint of every projection this process does not apply now. */
  private async readStoredCheckpoints(): Promise<void> {
    const rows = await this.db.selectFrom('projection_checkpoints').select(['projection', 'position_commit', 'position_prepare']).execute()
    for (const row of rows) {
      const state = this.running.get(row.projection)
      if (state && !state.active) state.position = { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) }
    }
  }

  private settleWaiters(): void {
    for (const waiter of [...this.waiters]) if (this.reached(waiter.projections, waiter.position)) waiter.resolve(true)
  }

  /**
   * Each projection with its checkpoint and whether it reaches, within `withinMs`, the newest
   * event of its streams that exists now.
   */
  async status(withinMs = 1000): Promise<ProjectionStatus[]> {
    await this.readStoredCheckpoints()
    return Promise.all(
      [...this.running.values()].map(async ({ projection, lastError }) => {
        const head = await this.store.headPosition({ streamPrefixes: projection.streamPrefixes })
        const caughtUp = await this.waitForProjections([projection.name], head, withinMs)
        return { name: projection.name, position: this.running.get(projection.name)!.position, caughtUp, lastError }
      }),
    )
  }

  /**
   * Each projection's pending events, reading at most `maxEvents` of them per projection (metrics);
   * from the stored checkpoint of those another process applies.
   */
  async lag(maxEvents: number): Promise<ProjectionLag[]> {
    await this.readStoredCheckpoints()
    return Promise.all(
      [...this.running.values()].map(async ({ projection, position }) => {
        const pending = await this.store.readAll({ streamPrefixes: projection.streamPrefixes, from: position, limit: maxEvents })
        return { name: projection.name, eventsBehind: pending.length, oldestPendingAt: pending[0] ? new Date(pending[0].createdAt) : undefined }
      }),
    )
  }

  async stop(): Promise<void> {
    this.controller?.abort()
    await Promise.all(this.loops)
    this.loops = []
    this.controller = undefined
    for (const waiter of [...this.waiters]) waiter.resolve(false)
  }
}

export interface RebuildProgress {
  projection: string
  done: number
  total: number | undefined
}

export interface RebuildOptions {
  /** How many projections write a batch at once; each holds one connection of `db` while it does. */
  concurrency: number
  onProgress?: (progress: RebuildProgress) => void
  /** Called as each projection finishes, with the events it applied and its own duration. */
  onRebuilt?: (projection: string, events: number, seconds: number) => void
  /** Events read from the log at a time (REBUILD_BATCH). */
  batchSize?: number
  /** Events a window spans at most (WINDOW_EVENTS). */
  windowEvents?: number
  /** Processes sharing a Postgres database: a read model is rebuilt by one of them at a time. */
  leases?: Leases
}

/** Batches the reader may hold ahead of the slowest projection: the read overlaps the writes. */
const READ_AHEAD = 3
/**
 * A rebuild's window: events folded before they are written, and the most rows a fold holds. A
 * session's events are spread over the log (tens of thousands of events apart when many sessions run
 * at once); a window this long writes most rows once instead of once per batch, in memory a few tens
 * of MiB per read model.
 */
const WINDOW_EVENTS = 100_000
const WINDOW_ROWS = 60_000
/**
 * Past this share of the heap limit every window ends at its next batch, whatever its bounds: rows
 * differ in size (a turn's webhook body is a kilobyte, a session's log row a few hundred bytes), so
 * rows alone cannot keep all the folds under the deployed heap cap (a first build of 1,000,000
 * events ran out of its 384 MiB without this; with it, the live heap stays near 220 MiB). The used
 * heap counts garbage not yet collected, so a window may end early for nothing: slower, never wrong.
 */
const WINDOW_HEAP_SHARE = 0.6
const heapIsFilling = () => getHeapStatistics().used_heap_size > WINDOW_HEAP_SHARE * getHeapStatistics().heap_size_limit

/**
 * A projection's part of a rebuild: the batches read for it and not yet applied, handed over with
 * back-pressure, so the shared reader is never more than READ_AHEAD batches ahead of it.
 */
class RebuildFeed {
  private readonly batches: (RecordedEvent[] | undefined)[] = []
  private readonly waiting: { taker?: () => void; giver?: () => void } = {}
  private ended = false
  /** Where the next window starts: the last event folded into a window. */
  folded = START
  done = 0

  constructor(
    readonly projection: Projection,
    /** Its checkpoint before the rebuild. */
    readonly appliedBefore: Position,
    private readonly windowEvents: number,
  ) {}

  async put(batch: RecordedEvent[] | undefined): Promise<void> {
    while (this.batches.length >= READ_AHEAD) await new Promise<void>((resolve) => (this.waiting.giver = resolve))
    this.batches.push(batch)
    this.waiting.taker?.()
  }

  /** The next page's events of its streams (none, where the page held none), or undefined once the log is read to its end. */
  async take(): Promise<RecordedEvent[] | undefined> {
    if (this.ended) return undefined
    while (this.batches.length === 0) await new Promise<void>((resolve) => (this.waiting.taker = resolve))
    const batch = this.batches.shift()
    this.ended = batch === undefined
    this.waiting.giver?.()
    return batch
  }

  /**
   * The next window: batches folded until it spans `windowEvents`, the fold holds WINDOW_ROWS rows, the
   * heap is filling, a page brings none of its events or the log ends (one batch for a projection
   * without a fold), with where it starts
   * and ends. `writing` is the window before it, still being written: a fold reads the rows that one
   * leaves from it rather than from the tables. Undefined at the end.
   */
  async nextWindow(db: Kysely<Database>, writing: Fold | undefined): Promise<RebuildWindow | undefined> {
    const fold = this.projection.fold?.({ appliedBefore: this.appliedBefore, writing })
    const unfolded: RecordedEvent[] = []
    const from = this.folded
    let events = 0
    for (let batch = await this.take(); batch; batch = await this.take()) {
      // A page of the log without its events ends the window: its streams went quiet (in the
      // benchmark's log every card event follows the session events), and a fold held through the
      // quiet fills the heap that the busy read models' windows need.
      if (batch.length === 0) {
        if (events > 0) break
        continue
      }
      if (fold) await fold.add(db, batch)
      else unfolded.push(...batch)
      this.folded = batch[batch.length - 1]!.position
      events += batch.length
      if (!fold || events >= this.windowEvents || fold.held >= WINDOW_ROWS || heapIsFilling()) break
    }
    if (events === 0) return undefined
    const projection = this.projection
    return { from, reached: this.folded, events, fold, write: fold ? (trx) => fold.write(trx) : (trx) => applyAll(trx, projection, unfolded) }
  }
}

interface RebuildWindow {
  /** The last event before it (the checkpoint its write moves from) and its own last. */
  from: Position
  reached: Position
  events: number
  fold: Fold | undefined
  write: (trx: Transaction<Database>) => Promise<void>
}

/** A counting semaphore: at most `permits` holders at once. */
function limiter(permits: number) {
  const queue: (() => void)[] = []
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (permits > 0) permits--
    else await new Promise<void>((resolve) => queue.push(resolve))
    try {
      return await work()
    } finally {
      const next = queue.shift()
      if (next) next()
      else permits++
    }
  }
}

/**
 * Empties the projections' tables and checkpoints, then replays the log into them. The log is read
 * once, in order, for all of them: each gets the events of its streams, folds them in windows of
 * many batches (WINDOW_EVENTS) and writes each window in one transaction with its checkpoint, while
 * it folds the next, at most `concurrency` projections writing at a time. Their secondary indexes are
 * dropped meanwhile and their kept totals left off, both made once each replay ends
 * (deferred-indexes.ts). A runtime feeding the
 * same projection notices the moved checkpoint and follows it; should it apply events first, the
 * rebuild leaves the rest of that read model to it.
 */
export async function rebuildProjections(
  db: Kysely<Database>,
  store: EventStore,
  projections: readonly Projection[],
  options: RebuildOptions,
): Promise<Map<string, number>> {
  const leases = await takeRebuildLeases(options.leases, projections)
  const completed = new Set<string>()
  try {
    return await replayInto(db, store, projections, options, completed)
  } finally {
    // Stopped early: the runtime goes on from the checkpoints reached, with the indexes and totals
    // it needs. Failing here too (the database gone), the next process to start makes them.
    await Promise.allSettled(projections.filter((p) => !completed.has(p.name)).map((p) => completeDeferred(db, p.name)))
    await Promise.allSettled(leases.map((lease) => lease.release()))
  }
}

async function replayInto(
  db: Kysely<Database>,
  store: EventStore,
  projections: readonly Projection[],
  { concurrency, onProgress, onRebuilt, batchSize = REBUILD_BATCH, windowEvents = WINDOW_EVENTS }: RebuildOptions,
  completed: Set<string>,
): Promise<Map<string, number>> {
  const totals = new Map(await Promise.all(projections.map(async (p) => [p.name, await store.count({ streamPrefixes: p.streamPrefixes })] as const)))
  const appliedBefore = new Map<string, Position>()
  for (const projection of projections) {
    appliedBefore.set(projection.name, await readCheckpoint(db, projection.name))
    await db.transaction().execute(async (trx) => {
      // The checkpoint row first, as a live reader takes it before touching the tables: in the
      // other order the two deadlock.
      await writeCheckpoint(trx, projection.name, START)
      for (const table of projection.tables) await sql`truncate table ${sql.table(table)}`.execute(trx)
      await deferSecondaryIndexes(trx, projection)
      await deferKeptCounts(trx, projection)
    })
  }
  const feeds = projections.map((projection) => new RebuildFeed(projection, appliedBefore.get(projection.name) ?? START, windowEvents))
  // A parked stream's events from its parked one on wait for `flowd processors retry`, in a rebuild as live.
  const parked = new Map(await Promise.all(projections.map(async (p) => [p.name, await parkedStreamsOf(db, p.name)] as const)))
  const writers = limiter(concurrency)
  const abort = new AbortController()
  const rebuilt = new Map<string, number>()

  /**
   * Writes a window with its checkpoint, which moves only from the window's start. Should a live
   * runtime have moved it meanwhile, the window is left to that runtime, which reads the log again
   * from where it stopped; the rebuild cannot give it back the events it has read past.
   */
  const writeWindow = async (feed: RebuildFeed, window: RebuildWindow) => {
    // Without waiting for each commit's WAL flush: a crash loses at most the last windows, with
    // their checkpoint (the same transaction), and the runtime goes on from what is durable.
    const outcome = await writers(() => writeWithCheckpoint(db, feed.projection, window.from, window.reached, window.write, { waitForFlush: false }))
    if (outcome.applied) feed.done += window.events
    onProgress?.({ projection: feed.projection.name, done: feed.done, total: totals.get(feed.projection.name) })
  }

  const apply = async (feed: RebuildFeed) => {
    const { projection } = feed
    const started = performance.now()
    onProgress?.({ projection: projection.name, done: 0, total: totals.get(projection.name) })
    // Each window is folded while the one before it is written: the process folds while the
    // database writes. Writes stay in order, one at a time per read model.
    let writing: { window: RebuildWindow; written: Promise<void> } | undefined
    try {
      for (;;) {
        const window = await feed.nextWindow(db, writing?.window.fold)
        await writing?.written
        if (!window) break
        const written = writeWindow(feed, window)
        // Awaited once the next window is folded; a failure meanwhile is not unhandled.
        written.catch(() => {})
        writing = { window, written }
      }
    } finally {
      // A fold that failed: its error is the one reported, once the write before it has ended.
      await writing?.written.catch(() => {})
    }
    // The log was not read to its end: another projection or the reader failed.
    if (abort.signal.aborted) return
    await writers(() => completeDeferred(db, projection.name))
    completed.add(projection.name)
    rebuilt.set(projection.name, feed.done)
    onRebuilt?.(projection.name, feed.done, (performance.now() - started) / 1000)
  }

  const read = async () => {
    const everything = projections.some((p) => p.streamPrefixes.length === 0)
    const filter = { streamPrefixes: everything ? [] : [...new Set(projections.flatMap((p) => p.streamPrefixes))] }
    let position = START
    try {
      for (;;) {
        if (abort.signal.aborted) return
        const batch = await store.readAll({ ...filter, from: position, limit: batchSize })
        if (batch.length === 0) return
        position = batch[batch.length - 1]!.position
        for (const feed of feeds) {
          const parkedOfFeed = parked.get(feed.projection.name)!
          await feed.put(batch.filter((event) => matchesFilter(event.stream, feed.projection) && !waitsBehind(parkedOfFeed, event)))
        }
      }
    } catch (error) {
      abort.abort()
      throw error
    } finally {
      for (const feed of feeds) await feed.put(undefined)
    }
  }

  const outcomes = await Promise.allSettled([
    read(),
    ...feeds.map((feed) =>
      apply(feed).catch(async (error: unknown) => {
        abort.abort()
        // Drain, so the reader is never left waiting on a feed nobody takes from.
        while (await feed.take());
        throw error
      }),
    ),
  ])
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
  if (failure) throw failure.reason
  return rebuilt
}

/** Rebuilds one projection (see {@link rebuildProjections}); returns the events it applied. */
export async function rebuildProjection(db: Kysely<Database>, store: EventStore, projection: Projection, onProgress?: (progress: RebuildProgress) => void): Promise<number> {
  const rebuilt = await rebuildProjections(db, store, [projection], { concurrency: 1, onProgress })
  return rebuilt.get(projection.name) ?? 0
}

/**
 * Replays a stream `projection` parked (`flowd processors retry`): its events from the parked one to
 * the checkpoint, applied in one transaction that holds the checkpoint's row, so the live reader's
 * next batch waits for it and then finds the stream off the list. False when it was not parked;
 * failing again, nothing changes and the error is thrown.
 */
export async function retryParkedStream(db: Kysely<Database>, store: EventStore, projection: Projection, stream: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const parked = (await listParked(trx, projection.name)).find((p) => p.stream === stream)
    if (!parked) return false
    await insertCheckpointIfMissing(trx, projection.name)
    const row = await trx.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).where('projection', '=', projection.name).forUpdate().executeTakeFirstOrThrow()
    const reached: Position = { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) }
    // Through the transaction where the log is in this database, so the stream is read as of the lock.
    const all = store.kind === 'postgres' ? await readStreamThrough(trx, stream) : await store.readStream(stream)
    const events = all.filter((e) => comparePositions(e.position, parked.position) >= 0 && comparePositions(e.position, reached) <= 0)
    await applyAll(trx, projection, events)
    await unpark(trx, projection.name, stream)
    return true
  })
}
