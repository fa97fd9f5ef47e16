import { setMaxListeners } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Logger } from '../logger.js'
import { START, comparePositions, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import type { WakeUp } from '../eventstore/wake-up.js'
import { toBigInt, type Database } from '../store/database.js'
import { whileLeased, type Leases } from '../store/lease.js'
import { applyAll, type Projection } from './projection.js'

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
}

export interface ProjectionRuntimeOptions {
  /**
   * One active reader per projection across processes, the others standing by (Postgres). Absent
   * (the embedded database, tests), every started runtime reads every projection.
   */
  leases?: Leases
  /** Announces this process's checkpoint moves to the others and wakes its waits on theirs (Postgres). */
  checkpointsMoved?: WakeUp
}

interface Waiter {
  projections: string[]
  position: Position
  resolve(reached: boolean): void
}

const BATCH = 500
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
 * Applies a batch in one transaction with the checkpoint. The checkpoint moves first, and only
 * from where this reader started: if another process (or a rebuild) moved it, nothing is applied
 * and the reader follows the stored position. The row lock the move takes serialises readers of
 * one projection, so each event reaches the read model once.
 */
async function applyBatch(db: Kysely<Database>, projection: Projection, from: Position, events: RecordedEvent[]): Promise<BatchOutcome> {
  const reached = events[events.length - 1]!.position
  return db.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable('projection_checkpoints')
      .set({ position_commit: String(reached.commit), position_prepare: String(reached.prepare), updated_at: sql`now()` })
      .where('projection', '=', projection.name)
      .where(sql<boolean>`(position_commit, position_prepare) = (${String(from.commit)}::bigint, ${String(from.prepare)}::bigint)`)
      .returning('projection')
      .executeTakeFirst()
    if (!moved) {
      // A projection's first batch ever: its row is made here, and the reader comes back from START.
      await insertCheckpointIfMissing(trx, projection.name)
      return { applied: false, position: await readCheckpoint(trx, projection.name) }
    }
    await applyAll(trx, projection, events)
    return { applied: true, position: reached }
  })
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
    this.running = new Map(projections.map((projection) => [projection.name, { projection, position: START, lastError: undefined, active: false }]))
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

  private async run(state: Running, signal: AbortSignal): Promise<void> {
    const { projection } = state
    try {
      while (!signal.aborted) {
        try {
          // From the stored checkpoint: another process may have moved it while this one stood by.
          if (!state.active) {
            state.position = await readCheckpoint(this.db, projection.name)
            state.active = true
          }
          for await (const batch of this.store.subscribeAll({ from: state.position, streamPrefixes: projection.streamPrefixes, signal, maxBatch: BATCH })) {
            const outcome = await applyBatch(this.db, projection, state.position, batch)
            state.position = outcome.position
            state.lastError = undefined
            this.settleWaiters()
            if (outcome.applied) {
              this.options.checkpointsMoved?.announce()
              for (const listener of this.appliedListeners) listener(projection.name)
            }
            // Another reader moved the checkpoint: resubscribe from where it left it.
            if (!outcome.applied) break
          }
        } catch (error) {
          state.lastError = error instanceof Error ? error.message : String(error)
          this.logger.error({ err: error, projection: projection.name }, 'projection failed; retrying')
          await delay(1000, undefined, { signal }).catch(() => {})
          state.active = false
        }
      }
    } finally {
      state.active = false
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

/**
 * Empties a projection's tables and checkpoint in one transaction, then replays every event it
 * reads from the start. A runtime feeding the same projection notices the moved checkpoint and
 * follows it.
 */
export async function rebuildProjection(
  db: Kysely<Database>,
  store: EventStore,
  projection: Projection,
  onProgress: (progress: RebuildProgress) => void = () => {},
  /** Events of its streams, when the caller counted them already. */
  counted?: number,
): Promise<number> {
  const filter = { streamPrefixes: projection.streamPrefixes }
  const total = counted ?? (await store.count(filter))
  await db.transaction().execute(async (trx) => {
    // The checkpoint row first, as a live reader takes it before touching the tables: in the
    // other order the two deadlock.
    await writeCheckpoint(trx, projection.name, START)
    for (const table of projection.tables) await sql`truncate table ${sql.table(table)}`.execute(trx)
  })
  let position = START
  let done = 0
  onProgress({ projection: projection.name, done, total })
  for (;;) {
    const batch = await store.readAll({ ...filter, from: position, limit: BATCH })
    if (batch.length === 0) break
    const outcome = await applyBatch(db, projection, position, batch)
    // A live runtime that applied this stretch first has done the work already.
    position = outcome.position
    done = outcome.applied ? done + batch.length : done
    onProgress({ projection: projection.name, done, total })
  }
  return done
}


export interface RebuildAllOptions {
  /** How many projections replay at once; each holds one connection of `db` at a time. */
  concurrency: number
  onProgress?: (progress: RebuildProgress) => void
  /** Called as each projection finishes, with the events it applied and its own duration. */
  onRebuilt?: (projection: string, events: number, seconds: number) => void
}

/**
 * Rebuilds several projections, up to `concurrency` at once. They share nothing but the event
 * log: each truncates only its own tables and locks only its own checkpoint row. The biggest start
 * first, so the longest replay does not begin last. After a failure no further one starts; those
 * under way finish, then the first error is thrown.
 */
export async function rebuildProjections(
  db: Kysely<Database>,
  store: EventStore,
  projections: readonly Projection[],
  { concurrency, onProgress, onRebuilt }: RebuildAllOptions,
): Promise<Map<string, number>> {
  const sized = await Promise.all(projections.map(async (projection) => ({ projection, total: await store.count({ streamPrefixes: projection.streamPrefixes }) })))
  const queue = sized.sort((a, b) => (b.total ?? 0) - (a.total ?? 0))
  const rebuilt = new Map<string, number>()
  let failed = false
  const worker = async () => {
    for (let next = queue.shift(); next && !failed; next = queue.shift()) {
      const started = performance.now()
      try {
        const events = await rebuildProjection(db, store, next.projection, onProgress, next.total)
        rebuilt.set(next.projection.name, events)
        onRebuilt?.(next.projection.name, events, (performance.now() - started) / 1000)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  const outcomes = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker))
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
  if (failure) throw failure.reason
  return rebuilt
}
