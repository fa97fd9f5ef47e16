import { setMaxListeners } from 'node:events'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Logger } from '../logger.js'
import { START, comparePositions, matchesFilter, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { toBigInt, type Database } from '../store/database.js'
import { applyAll, type Projection } from './projection.js'

export interface ProjectionStatus {
  name: string
  position: Position
  /** It has applied the newest event of its streams, or did within the bound asked for. */
  caughtUp: boolean
  lastError: string | undefined
}

interface Running {
  projection: Projection
  position: Position
  lastError: string | undefined
}

interface Waiter {
  projections: string[]
  position: Position
  resolve(reached: boolean): void
}

const BATCH = 500

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
  private readonly running = new Map<string, Running>()
  private waiters: Waiter[] = []
  private readonly appliedListeners = new Set<(projection: string) => void>()
  private controller?: AbortController
  private loops: Promise<void>[] = []

  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: EventStore,
    readonly projections: readonly Projection[],
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.controller) return
    this.controller = new AbortController()
    // Every projection's subscription listens to this one signal.
    setMaxListeners(this.projections.length + 10, this.controller.signal)
    for (const projection of this.projections) {
      await insertCheckpointIfMissing(this.db, projection.name)
      const position = await readCheckpoint(this.db, projection.name)
      const state: Running = { projection, position, lastError: undefined }
      this.running.set(projection.name, state)
      this.loops.push(this.run(state, this.controller.signal))
    }
  }

  private async run(state: Running, signal: AbortSignal): Promise<void> {
    const { projection } = state
    while (!signal.aborted) {
      try {
        for await (const batch of this.store.subscribeAll({ from: state.position, streamPrefixes: projection.streamPrefixes, signal, maxBatch: BATCH })) {
          const outcome = await applyBatch(this.db, projection, state.position, batch)
          state.position = outcome.position
          state.lastError = undefined
          this.settleWaiters()
          if (outcome.applied) for (const listener of this.appliedListeners) listener(projection.name)
          // Another reader moved the checkpoint: resubscribe from where it left it.
          if (!outcome.applied) break
        }
      } catch (error) {
        state.lastError = error instanceof Error ? error.message : String(error)
        this.logger.error({ err: error, projection: projection.name }, 'projection failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, 1000))
        state.position = await readCheckpoint(this.db, projection.name).catch(() => state.position)
      }
    }
  }

  /** Calls `listener` with a projection's name after each batch it applies; returns the unsubscribe. */
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
    })
  }

  private reached(names: string[], position: Position): boolean {
    return names.every((name) => {
      const state = this.running.get(name)
      return state !== undefined && comparePositions(state.position, position) >= 0
    })
  }

  private settleWaiters(): void {
    for (const waiter of [...this.waiters]) if (this.reached(waiter.projections, waiter.position)) waiter.resolve(true)
  }

  /**
   * Each projection with its checkpoint and whether it reaches, within `withinMs`, the newest
   * event of its streams that exists now.
   */
  async status(withinMs = 1000): Promise<ProjectionStatus[]> {
    return Promise.all(
      [...this.running.values()].map(async ({ projection, lastError }) => {
        const head = await this.store.headPosition({ streamPrefixes: projection.streamPrefixes })
        const caughtUp = await this.waitForProjections([projection.name], head, withinMs)
        return { name: projection.name, position: this.running.get(projection.name)!.position, caughtUp, lastError }
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
): Promise<number> {
  const filter = { streamPrefixes: projection.streamPrefixes }
  const total = await store.count(filter)
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

