import { setTimeout as delay } from 'node:timers/promises'
import { getHeapStatistics } from 'node:v8'
import { sql, type Kysely, type Transaction } from 'kysely'
import { ConflictError } from '../errors.js'
import { START, comparePositions, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { readAllThrough } from '../eventstore/postgres.js'
import { backoffMs, isTransient } from '../processors/failures.js'
import { parkedStreamsOf } from '../processors/parked-streams.js'
import { toBigInt, type Database } from '../store/database.js'
import type { Leases } from '../store/lease.js'
import { insertCheckpointIfMissing, readCheckpoint, writeWithCheckpoint } from './checkpoints.js'
import { applyAll, type Fold, type Projection } from './projection.js'
import { PassedOverStreams } from './rebuild-parked.js'
import { projectionLeaseName } from './runtime.js'
import { RebuildWouldDropError, unkeptDependents } from './shadow-dependents.js'
import { SHADOW_SCHEMA, completeShadowTables, createShadowTables, dropShadowSchema, prepareShadowSchema, swapInShadowTables, type DeferredDefinitions } from './shadow.js'
import { SWAP_PACING, isLockTimeout, lockHolders, type SwapBlocked, type SwapPacing } from './swap-locks.js'

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
  /**
   * Processes sharing a Postgres database: one rebuild at a time, and whether a live reader applies
   * each read model (it holds the read model's lease). Without them, nobody else does.
   */
  leases?: Leases
  /** How each swap waits for its locks (SwapPacing); the defaults suit a running service. */
  swapPacing?: Partial<SwapPacing>
  /** Called each time a swap could not get its locks in time, with the connections that hold them. */
  onSwapBlocked?: (blocked: SwapBlocked) => void
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

  readonly projection: Projection
  readonly appliedBefore: Position
  private readonly liveReaderAt: Position | undefined
  readonly deferred: DeferredDefinitions
  private readonly windowEvents: number

  constructor(
    projection: Projection,
    /** Events up to here had their effects outside the read model's tables (FoldOptions). */
    appliedBefore: Position,
    /** Where a live reader had got when the rebuild began: the replay ends there, the swap follows it. */
    liveReaderAt: Position | undefined,
    /** What its shadow tables get once filled. */
    deferred: DeferredDefinitions,
    windowEvents: number,
  ) {
    this.projection = projection
    this.appliedBefore = appliedBefore
    this.liveReaderAt = liveReaderAt
    this.deferred = deferred
    this.windowEvents = windowEvents
  }

  /** Whether the replay applies `event` (else the swap's catch-up does). */
  takes(event: RecordedEvent): boolean {
    return !this.liveReaderAt || comparePositions(event.position, this.liveReaderAt) <= 0
  }

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
      if (!fold || events >= this.windowEvents || fold.rowsHeld >= WINDOW_ROWS || heapIsFilling()) break
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

/** The lease a rebuild holds while it runs: one at a time per database, as they share the shadow schema. */
export const REBUILD_LEASE = 'rebuild'

/** The CLI exits with "refused" (4) on it, as for any conflict with the state of things. */
export class RebuildRunningError extends ConflictError {
  constructor() {
    super('another process is rebuilding read models')
  }
}

/** Refuses a rebuild whose swaps would drop something they cannot make again. */
async function refuseUnkeptDependents(db: Kysely<Database>, projections: readonly Projection[]): Promise<void> {
  const unkept: string[] = []
  for (const projection of projections) if (projection.tables.length > 0) unkept.push(...(await unkeptDependents(db, projection.tables)))
  if (unkept.length > 0) throw new RebuildWouldDropError([...new Set(unkept)])
}

/** Past every position: what a rebuild beside a live reader has done outside its tables, that reader does. */
const AFTER_EVERYTHING: Position = { commit: 2n ** 63n - 1n, prepare: 2n ** 63n - 1n }

/** Tries at a swap failing on something passing other than its locks (the database away) before the rebuild gives up. */
const SWAP_ATTEMPTS = 30

/** Where a rebuild writes the new tables: resolves names in the shadow schema first (shadow.ts). */
export interface RebuildStorage {
  projectorDb: Kysely<Database>
  inSchema(schema: string): Kysely<Database>
}

/**
 * Rebuilds read models without taking them away from their readers. Each one's tables are built
 * anew in the shadow schema (shadow.ts), its live tables serving reads and live writes meanwhile,
 * and swapped in once caught up with the live read model. The log is read once, in order, for all
 * of them: each gets the events of its streams, folds them in windows of many batches
 * (WINDOW_EVENTS) and writes each window in one transaction with its shadow checkpoint, while it
 * folds the next, at most `concurrency` projections writing at a time.
 *
 * Where a live reader applies the read model (another process holds its lease), the rebuild replays
 * the log only as far as that reader had got and then follows it: the effects outside its tables
 * (the outbox's deliveries) stay the live reader's. Where none does (the service is stopped, the
 * embedded database, a first build), it replays the whole log and does them for the events past the
 * live checkpoint, which it moves there at the swap.
 */
export async function rebuildProjections(
  storage: RebuildStorage,
  store: EventStore,
  projections: readonly Projection[],
  options: RebuildOptions,
): Promise<Map<string, number>> {
  const lease = options.leases && (await options.leases.tryAcquire(REBUILD_LEASE))
  if (options.leases && !lease) throw new RebuildRunningError()
  const db = storage.projectorDb
  const shadowDb = storage.inSchema(SHADOW_SCHEMA)
  try {
    await refuseUnkeptDependents(db, projections)
    await prepareShadowSchema(db)
    return await replayInto(db, shadowDb, store, projections, options)
  } finally {
    await shadowDb.destroy()
    // Failing here too (the database gone), the next rebuild drops it.
    await dropShadowSchema(db).catch(() => {})
    await lease?.release()
  }
}

/** Whether a process reads `projection` live now: its lease is held (without leases, nobody else can). */
async function readLiveElsewhere(leases: Leases | undefined, projection: Projection): Promise<boolean> {
  if (!leases) return false
  const lease = await leases.tryAcquire(projectionLeaseName(projection.name))
  await lease?.release()
  return !lease
}

async function replayInto(
  db: Kysely<Database>,
  shadowDb: Kysely<Database>,
  store: EventStore,
  projections: readonly Projection[],
  { concurrency, onProgress, onRebuilt, batchSize = REBUILD_BATCH, windowEvents = WINDOW_EVENTS, leases, swapPacing, onSwapBlocked }: RebuildOptions,
): Promise<Map<string, number>> {
  const totals = new Map(await Promise.all(projections.map(async (p) => [p.name, await store.count({ streamPrefixes: p.streamPrefixes })] as const)))
  const feeds: RebuildFeed[] = []
  for (const projection of projections) {
    const liveAt = await readCheckpoint(db, projection.name)
    const besideLive = await readLiveElsewhere(leases, projection)
    const deferred = await createShadowTables(db, projection)
    await insertCheckpointIfMissing(shadowDb, projection.name)
    feeds.push(new RebuildFeed(projection, besideLive ? AFTER_EVERYTHING : liveAt, besideLive ? liveAt : undefined, deferred, windowEvents))
  }
  // A parked stream's events from its parked one on wait for `flowd processors retry`, in a rebuild as
  // live; retried meanwhile, the swap replays them (rebuild-parked.ts).
  const passedOver = new Map(await Promise.all(projections.map(async (p) => [p.name, new PassedOverStreams(p, await parkedStreamsOf(db, p.name))] as const)))
  const writers = limiter(concurrency)
  // One swap at a time: swaps recreate the views over several read models' tables.
  const swaps = limiter(1)
  const swapContext: SwapContext = { db, shadowDb, store, writers, swaps, pacing: { ...SWAP_PACING, ...swapPacing }, onSwapBlocked }
  const abort = new AbortController()
  const rebuilt = new Map<string, number>()

  const writeWindow = async (feed: RebuildFeed, window: RebuildWindow) => {
    // Without waiting for each commit's WAL flush: nobody reads these tables before the swap, whose
    // commit does wait, and a crash before it leaves the schema to the next rebuild.
    const outcome = await writers(() => writeWithCheckpoint(shadowDb, feed.projection, window.from, window.reached, window.write, { waitForFlush: false }))
    if (!outcome.applied) throw new Error(`the rebuild's checkpoint of ${feed.projection.name} moved under it`)
    feed.done += window.events
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
        const window = await feed.nextWindow(shadowDb, writing?.window.fold)
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
    await writers(() => completeShadowTables(shadowDb, projection, feed.deferred))
    const caughtUp = await swapIn(swapContext, projection, passedOver.get(projection.name)!, feed.folded)
    feed.done += caughtUp
    rebuilt.set(projection.name, feed.done)
    onProgress?.({ projection: projection.name, done: feed.done, total: totals.get(projection.name) })
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
          const passedOverOfFeed = passedOver.get(feed.projection.name)!
          await feed.put(batch.filter((event) => matchesFilter(event.stream, feed.projection) && feed.takes(event) && !passedOverOfFeed.passes(event)))
        }
        // Every read model follows a live reader and the log is read past where they all were.
        if (feeds.every((feed) => !feed.takes(batch[batch.length - 1]!))) return
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

interface SwapContext {
  db: Kysely<Database>
  shadowDb: Kysely<Database>
  store: EventStore
  /** Hold a write permit (the connection) and the one swap at a time. */
  writers: <T>(work: () => Promise<T>) => Promise<T>
  swaps: <T>(work: () => Promise<T>) => Promise<T>
  pacing: SwapPacing
  onSwapBlocked?: (blocked: SwapBlocked) => void
}

/**
 * Swaps a projection's shadow tables in (shadow.ts), in one transaction that holds its live
 * checkpoint's row: live batches wait for it, then go on writing to the new tables. The shadow is
 * caught up to the live checkpoint first outside that transaction, then the rest inside it; a
 * shadow ahead of it (the rebuild read the log further than a live reader had) moves it there.
 * The streams retried since the rebuild passed them over are replayed into the new tables there too.
 *
 * Readers wait for the swap's locks, never fail on them; an attempt waits at most
 * `pacing.lockTimeoutMs` for them, so readers never queue behind it for long, and the swap tries
 * again after a pause for as long as a transaction holds a table (swap-locks.ts), each time telling
 * `onSwapBlocked` who holds it. Returns the events the catch-ups and replays applied.
 */
async function swapIn(ctx: SwapContext, projection: Projection, passedOver: PassedOverStreams, shadowAt: Position): Promise<number> {
  const { db, shadowDb, store, writers, swaps, pacing } = ctx
  await insertCheckpointIfMissing(db, projection.name)
  let caughtUp = 0
  let failures = 0
  let blocked = 0
  let waitingSince: Date | undefined
  for (;;) {
    const outside = await writers(async () => catchUp(shadowDb, store, projection, passedOver, shadowAt, await readCheckpoint(db, projection.name)))
    shadowAt = outside.reached
    caughtUp += outside.events
    try {
      return caughtUp + (await swaps(() => writers(() => swapAttempt(shadowDb, store, projection, passedOver, shadowAt, pacing.lockTimeoutMs))))
    } catch (error) {
      if (isLockTimeout(error)) {
        blocked++
        waitingSince ??= new Date()
        // Naming them is a courtesy: failing to, the swap still tries again.
        const holders = await lockHolders(db, projection.tables).catch(() => [])
        ctx.onSwapBlocked?.({ projection: projection.name, attempts: blocked, waitingSince, holders })
        await delay(backoffMs(blocked, pacing.pauseMs))
        continue
      }
      if (!isTransient(error) || ++failures >= SWAP_ATTEMPTS) throw error
      await delay(backoffMs(failures, 1_000))
    }
  }
}

/** One try at a swap (see {@link swapIn}); returns the events it applied. */
async function swapAttempt(shadowDb: Kysely<Database>, store: EventStore, projection: Projection, passedOver: PassedOverStreams, shadowAt: Position, lockTimeoutMs: number): Promise<number> {
  return shadowDb.transaction().execute(async (trx) => {
    await sql`set local lock_timeout = ${sql.lit(`${lockTimeoutMs}ms`)}`.execute(trx)
    const liveAt = await lockLiveCheckpoint(trx, projection.name)
    // Read under the checkpoint's lock, which a retry holds while it replays: what it shows is final until the swap commits.
    const parkedNow = await parkedStreamsOf(trx, projection.name)
    passedOver.note(parkedNow)
    let inside = 0
    if (comparePositions(shadowAt, liveAt) < 0) {
      const events = (await readAllVia(trx, store, projection, shadowAt, liveAt)).filter((event) => !passedOver.passes(event))
      await applyAll(trx, projection, events, projection.fold?.({ appliedBefore: AFTER_EVERYTHING }))
      inside = events.length
    } else if (comparePositions(shadowAt, liveAt) > 0) {
      await sql`update public.projection_checkpoints set position_commit = ${String(shadowAt.commit)}, position_prepare = ${String(shadowAt.prepare)}, updated_at = now()
        where projection = ${projection.name}`.execute(trx)
    }
    const swappedAt = comparePositions(shadowAt, liveAt) > 0 ? shadowAt : liveAt
    inside += await passedOver.carryRetried(trx, store, projection, parkedNow, liveAt, swappedAt)
    await swapInShadowTables(trx, projection)
    return inside
  })
}

const lockLiveCheckpoint = async (trx: Transaction<Database>, name: string): Promise<Position> => {
  const { rows } = await sql<{ commit: string | number; prepare: string | number }>`
    select position_commit as commit, position_prepare as prepare from public.projection_checkpoints where projection = ${name} for update`.execute(trx)
  const row = rows[0]!
  return { commit: toBigInt(row.commit), prepare: toBigInt(row.prepare) }
}

/** A projection's events after `from` through `through`: through `trx` where the log is in this database. */
const readAllVia = async (trx: Transaction<Database>, store: EventStore, projection: Projection, from: Position, through: Position): Promise<RecordedEvent[]> => {
  if (store.kind === 'postgres') return readAllThrough(trx, { streamPrefixes: projection.streamPrefixes, from, through })
  const events: RecordedEvent[] = []
  for (let position = from; ; ) {
    const batch = (await store.readAll({ streamPrefixes: projection.streamPrefixes, from: position, limit: REBUILD_BATCH })).filter((e) => comparePositions(e.position, through) <= 0)
    if (batch.length === 0) return events
    events.push(...batch)
    position = batch[batch.length - 1]!.position
  }
}

/**
 * Applies to the shadow tables the events after `from` through `through`, in batches with the shadow
 * checkpoint. Their effects outside the tables are the live reader's, which applied them.
 */
async function catchUp(
  shadowDb: Kysely<Database>,
  store: EventStore,
  projection: Projection,
  passedOver: PassedOverStreams,
  from: Position,
  through: Position,
): Promise<{ reached: Position; events: number }> {
  let events = 0
  let reached = from
  while (comparePositions(reached, through) < 0) {
    passedOver.note(await parkedStreamsOf(shadowDb, projection.name))
    const batch = (await store.readAll({ streamPrefixes: projection.streamPrefixes, from: reached, limit: REBUILD_BATCH })).filter((e) => comparePositions(e.position, through) <= 0)
    if (batch.length === 0) break
    const end = batch[batch.length - 1]!.position
    const applying = batch.filter((event) => !passedOver.passes(event))
    const outcome = await writeWithCheckpoint(shadowDb, projection, reached, end, (trx) => applyAll(trx, projection, applying, projection.fold?.({ appliedBefore: AFTER_EVERYTHING })))
    if (!outcome.applied) throw new Error(`the rebuild's checkpoint of ${projection.name} moved under it`)
    events += applying.length
    reached = end
  }
  return { reached, events }
}

/** Rebuilds one projection (see {@link rebuildProjections}); returns the events it applied. */
export async function rebuildProjection(storage: RebuildStorage, store: EventStore, projection: Projection, onProgress?: (progress: RebuildProgress) => void): Promise<number> {
  const rebuilt = await rebuildProjections(storage, store, [projection], { concurrency: 1, onProgress })
  return rebuilt.get(projection.name) ?? 0
}
