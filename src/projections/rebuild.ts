import { getHeapStatistics } from 'node:v8'
import { sql, type Kysely, type Transaction } from 'kysely'
import { START, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { parkedStreamsOf, waitsBehind } from '../processors/parked-streams.js'
import type { Database } from '../store/database.js'
import type { Leases } from '../store/lease.js'
import { appliedThrough, markAppliedBeforeRebuild, writeCheckpoint, writeWithCheckpoint } from './checkpoints.js'
import { completeDeferred, deferKeptCounts, deferSecondaryIndexes, takeRebuildLeases } from './deferred-indexes.js'
import { applyAll, type Fold, type Projection } from './projection.js'

/**
 * A rebuild's batches: bigger, as nobody waits on them (a session's events then fall in fewer
 * batches, each writing its row once), and within the parameter limits of the batch writers'
 * multi-row inserts: at most 11 columns a row, 55,000 of PostgreSQL's 65,535 parameters.
 */
const REBUILD_BATCH = 5000

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
    await db.transaction().execute(async (trx) => {
      // The checkpoint row first, as a live reader takes it before touching the tables: in the
      // other order the two deadlock. Locked, it is read as no live batch can move it any more.
      await sql`select 1 from projection_checkpoints where projection = ${projection.name} for update`.execute(trx)
      const before = await appliedThrough(trx, projection.name)
      appliedBefore.set(projection.name, before)
      await markAppliedBeforeRebuild(trx, projection.name, before)
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
