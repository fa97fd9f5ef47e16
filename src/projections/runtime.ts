import { setMaxListeners } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Kysely } from 'kysely'
import type { Logger } from '../logger.js'
import { START, comparePositions, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { filterHeads, prefixHeads } from '../eventstore/postgres.js'
import type { WakeUp } from '../eventstore/wake-up.js'
import type { Metrics, ProjectionLag } from '../metrics/registry.js'
import { FAILURES_BEFORE_PARKING, backoffMs, isTransient } from '../processors/failures.js'
import { runLogProcessor } from '../processors/loop.js'
import { StreamParking } from '../processors/parked-streams.js'
import { toBigInt, type Database } from '../store/database.js'
import { prepared } from '../store/prepared.js'
import { whileLeased, type Leases } from '../store/lease.js'
import { applyLive, insertCheckpointIfMissing, readCheckpoint, writeWithCheckpoint, type BatchOutcome } from './checkpoints.js'
import { applyAll, type Projection } from './projection.js'

/** The lease of a projection's live reader: one process at a time applies it. */
export const projectionLeaseName = (projection: string) => `projection:${projection}`

export interface ProjectionStatus {
  name: string
  position: Position
  /** It has applied the newest event of its streams, or did within the bound asked for. */
  caughtUp: boolean
  lastError: string | undefined
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
  /** Ends its gathering between two batches (see `gather`), while it gathers. */
  endGathering?: () => void
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
  /**
   * Where the batches are applied, once `start` has been called (Postgres: the projector pool);
   * absent, the runtime's `db`, which also serves the stored checkpoints' reads and readiness.
   */
  applyDb?: Kysely<Database>
  /** How long a projection off the webhook path gathers events between batches (GATHER_MS). */
  gatherMs?: number
}

interface Waiter {
  projections: string[]
  position: Position
  resolve(reached: boolean): void
}

const BATCH = 500
/**
 * How long a projection off the webhook path lets events gather between the starts of two batches,
 * while no write waits for it. A steady trickle (a few events a millisecond) then makes batches of
 * dozens of events that share one transaction, checkpoint move and set of statements, instead of
 * a batch of one or two events each; the read models' lists may lag this much behind the log.
 */
const GATHER_MS = 25
/** The NOTIFY channel on which processes announce that a projection's checkpoint moved. */
export const CHECKPOINTS_CHANNEL = 'flowd_checkpoints'
/** How often a wait on a projection applied by another process reads the checkpoints when no NOTIFY woke it. */
const STORED_CHECKPOINT_POLL_MS = 100

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

  private readonly db: Kysely<Database>
  private readonly applyDb: Kysely<Database>
  private readonly store: EventStore
  readonly projections: readonly Projection[]
  private readonly logger: Logger
  private readonly options: ProjectionRuntimeOptions

  constructor(
    db: Kysely<Database>,
    store: EventStore,
    projections: readonly Projection[],
    logger: Logger,
    options: ProjectionRuntimeOptions = {},
  ) {
    this.db = db
    this.applyDb = options.applyDb ?? db
    this.store = store
    this.projections = projections
    this.logger = logger
    this.options = options
    this.running = new Map(
      projections.map((projection) => [
        projection.name,
        { projection, position: START, lastError: undefined, active: false, parking: new StreamParking(projection.name, logger, options.metrics, projection.parksWith) },
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
      await insertCheckpointIfMissing(this.applyDb, state.projection.name)
      this.loops.push(whileLeased(this.options.leases, projectionLeaseName(state.projection.name), signal, (leased) => this.run(state, leased), this.logger))
    }
  }

  /**
   * Applies batches from the checkpoint on, as a log processor (src/processors/loop.ts). A batch
   * that fails FAILURES_BEFORE_PARKING times in a row and not for a transient reason is applied
   * event by event, so the event that fails parks its stream and every other stream goes on (isolate).
   */
  private async run(state: Running, signal: AbortSignal): Promise<void> {
    const { projection } = state
    try {
      await runLogProcessor(
        {
          name: projection.name,
          streamPrefixes: projection.streamPrefixes,
          maxBatch: BATCH,
          resume: async () => {
            state.position = await readCheckpoint(this.applyDb, projection.name)
            await state.parking.load(this.applyDb)
            state.active = true
            return state.position
          },
          handle: async (batch, _from, through) => {
            const started = performance.now()
            const outcome = await this.applyBatch(state, batch, through)
            state.position = outcome.position
            state.lastError = undefined
            this.settleWaiters()
            if (!outcome.applied) return { position: outcome.position, moved: true }
            this.announceApplied(projection.name)
            // A full batch means more are waiting (catching up): nothing to gather for.
            if (!projection.onWebhookPath && batch.length < BATCH) await this.gather(state, started, signal)
            return { position: outcome.position }
          },
          isolate: async () => {
            await this.isolate(state)
            return state.position
          },
          failed: (error) => {
            state.lastError = error instanceof Error ? error.message : String(error)
            state.active = false
          },
        },
        this.store,
        this.logger,
        signal,
        1_000,
      )
    } finally {
      state.active = false
    }
  }

  /**
   * Lets the events of `state`'s streams gather until `gatherMs` after `since` (the last batch's
   * start), unless a write waits for this projection or the runtime stops; a wait that starts
   * meanwhile ends it (`waitForProjections`).
   */
  private async gather(state: Running, since: number, signal: AbortSignal): Promise<void> {
    const remainingMs = (this.options.gatherMs ?? GATHER_MS) - (performance.now() - since)
    if (remainingMs <= 0 || signal.aborted || this.isAwaited(state)) return
    await new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', end)
        state.endGathering = undefined
        resolve()
      }
      const timer = setTimeout(end, remainingMs)
      signal.addEventListener('abort', end, { once: true })
      state.endGathering = end
    })
  }

  /** A write waits for `state`'s projection to apply an event it has not applied yet. */
  private isAwaited(state: Running): boolean {
    return this.waiters.some((waiter) => waiter.projections.includes(state.projection.name) && comparePositions(state.position, waiter.position) < 0)
  }

  private announceApplied(name: string): void {
    this.options.checkpointsMoved?.announce()
    for (const listener of this.appliedListeners) listener(name)
  }

  /**
   * A live batch, less the events of parked streams (asked again under the checkpoint's lock, as a
   * retry may have taken one off); without events, the checkpoint's move alone.
   */
  private applyBatch(state: Running, batch: RecordedEvent[], through: Position): Promise<BatchOutcome> {
    const { projection, parking } = state
    if (batch.length === 0) return writeWithCheckpoint(this.applyDb, projection, state.position, through, async () => {})
    if (!parking.meets(batch)) return applyLive(this.applyDb, projection, state.position, batch, through)
    return writeWithCheckpoint(this.applyDb, projection, state.position, through, async (trx) => {
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
          outcome = await writeWithCheckpoint(this.applyDb, projection, from, event.position, (trx) => (parking.waits(event) ? Promise.resolve() : applyAll(trx, projection, [event])))
        } catch (error) {
          if (isTransient(error)) throw error
          if (failures < FAILURES_BEFORE_PARKING) {
            await delay(backoffMs(failures))
            continue
          }
          const parksAt = { ...event, stream: parking.parksWith(event) }
          outcome = await writeWithCheckpoint(this.applyDb, projection, from, event.position, (trx) => parking.park(trx, parksAt, error, failures)).catch((parkError: unknown) => {
            parking.forget(parksAt.stream)
            throw parkError
          })
          if (outcome.applied) parked = true
          else parking.forget(parksAt.stream)
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
      for (const name of names) {
        const state = this.running.get(name)
        if (state && this.isAwaited(state)) state.endGathering?.()
      }
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
        const wakeUpsSeen = this.options.checkpointsMoved?.wakeUpCount
        await this.readStoredCheckpoints().catch((error: unknown) => this.logger.debug({ err: error }, 'reading stored checkpoints failed'))
        this.settleWaiters()
        if (!this.waitsOnOtherProcesses()) break
        if (this.options.checkpointsMoved) await this.options.checkpointsMoved.wait(STORED_CHECKPOINT_POLL_MS, undefined, wakeUpsSeen)
        else await delay(STORED_CHECKPOINT_POLL_MS)
      }
      this.followingStoredCheckpoints = false
    })()
  }

  /** Takes the stored checkpoint of every projection this process does not apply now. */
  private async readStoredCheckpoints(): Promise<void> {
    this.takeStoredCheckpoints(await this.db.selectFrom('projection_checkpoints').select(['projection', 'position_commit', 'position_prepare']).execute())
  }

  /** Rows without a projection are not checkpoints (see {@link checkpointsAndHeads}). */
  private takeStoredCheckpoints(rows: readonly { projection: string | null; position_commit: string | number | bigint | null; position_prepare: string | number | bigint | null }[]): void {
    for (const row of rows) {
      if (row.projection === null || row.position_commit === null || row.position_prepare === null) continue
      const state = this.running.get(row.projection)
      if (state && !state.active) state.position = { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) }
    }
  }

  /**
   * The stored checkpoints taken, and the head of every projection's streams. On Postgres the log
   * is in the read models' database (src/composition.ts), so both come from one statement, whatever
   * the number of projections; elsewhere the checkpoints, then one call to the store for all heads.
   */
  private async checkpointsAndHeads(): Promise<Position[]> {
    const filters = this.projections.map((projection) => ({ streamPrefixes: projection.streamPrefixes }))
    if (this.store.kind !== 'postgres') {
      await this.readStoredCheckpoints()
      return this.store.headPositions(filters)
    }
    const { prefixes, headsOf } = filterHeads(filters)
    const query = sql<{ projection: string | null; prefix: string | null; position_commit: string | null; position_prepare: string | null }>`
      with heads as (${prefixHeads(prefixes)})
      select null::text as projection, prefix, transaction_id as position_commit, global_position as position_prepare from heads
      union all
      select projection, null, position_commit, position_prepare from projection_checkpoints`.compile(this.db)
    const { rows } = await this.db.executeQuery(prepared(query))
    this.takeStoredCheckpoints(rows)
    return headsOf(rows.flatMap((row) => (row.prefix === null ? [] : [{ prefix: row.prefix, transaction_id: row.position_commit, global_position: row.position_prepare }])))
  }

  private settleWaiters(): void {
    for (const waiter of [...this.waiters]) if (this.reached(waiter.projections, waiter.position)) waiter.resolve(true)
  }

  /**
   * Each projection with its checkpoint and whether it reaches, within `withinMs`, the newest
   * event of its streams that exists now.
   */
  async status(withinMs = 1000): Promise<ProjectionStatus[]> {
    const heads = await this.checkpointsAndHeads()
    return Promise.all(
      this.projections.map(async (projection, i) => {
        const { lastError } = this.running.get(projection.name)!
        const caughtUp = await this.waitForProjections([projection.name], heads[i]!, withinMs)
        return { name: projection.name, position: this.running.get(projection.name)!.position, caughtUp, lastError }
      }),
    )
  }

  /**
   * Each projection's pending events, reading at most `maxEvents` of them per projection (metrics);
   * from the stored checkpoint of those another process applies. Only those behind the head of
   * their streams read the log.
   */
  async lag(maxEvents: number): Promise<ProjectionLag[]> {
    const heads = await this.checkpointsAndHeads()
    return Promise.all(
      this.projections.map(async (projection, i) => {
        const { position } = this.running.get(projection.name)!
        if (comparePositions(position, heads[i]!) >= 0) return { name: projection.name, eventsBehind: 0, oldestPendingAt: undefined }
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
