import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Kysely } from 'kysely'
import { DEFAULT_ENGINE_PARTITIONS, MAX_ENGINE_PARTITIONS } from '../config.js'
import { ConflictError } from '../errors.js'
import { START, comparePositions, type Position } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import { readCheckpoints } from '../projections/checkpoints.js'
import type { Database, DbOrTrx } from '../store/database.js'
import { LEASE_RETRY_MS, holdLeasesFor, type Lease, type Leases } from '../store/lease.js'

// Sessions are split into a fixed number of partitions (ENGINE_PARTITIONS) by a hash of their id.
// A partition is a lease and a checkpoint: the engine process holding the lease drives the
// partition's sessions from its checkpoint, so engines run side by side without running a turn twice.
// The checkpoints hold only for the count they were made with: the database records it (the first
// engine to start does), an engine with another count refuses to drive, and `flowd engine
// repartition` changes it.

/** The `application_name` of an engine process's lease connection: engine processes are counted by it. */
export const ENGINE_LEASE_APPLICATION_NAME = 'flowd-engine'
/** The expiry sweeper's lease: one sweeper runs, wherever the partitions are. */
export const SWEEPER_LEASE = 'engine-sweeper'
/** The unpartitioned engine checkpoint (one position for every session): where a partition without a checkpoint of its own goes on from. */
export const UNPARTITIONED_CHECKPOINT = 'engine'

export const partitionLease = (partition: number) => `engine:${partition}`
export const partitionCheckpoint = (partition: number) => `engine-${partition}`

/** The partitions an engine drives, out of `count`. */
export interface SessionPartitions {
  count: number
  held: readonly number[]
}

/** Every partition of `count`, in order. */
export const everyPartition = (count: number): number[] => Array.from({ length: count }, (_, partition) => partition)

/**
 * The partition of a session: FNV-1a (32 bits) over the id's characters, modulo `count`. Stable
 * across processes, versions and restarts, which a partition's checkpoint relies on.
 */
export function partitionOf(sessionId: string, count: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < sessionId.length; i++) hash = Math.imul(hash ^ sessionId.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % count
}

/**
 * Where each partition goes on from: its checkpoint; without one, the unpartitioned engine
 * checkpoint, so that partitioning a running deployment neither runs every turn again nor skips
 * one (a turn found done is not appended twice: it is appended at the revision it read).
 */
export async function partitionPositions(db: DbOrTrx, partitions: readonly number[]): Promise<Map<number, Position>> {
  const stored = await readCheckpoints(db, [UNPARTITIONED_CHECKPOINT, ...partitions.map(partitionCheckpoint)])
  const unpartitioned = stored.get(UNPARTITIONED_CHECKPOINT) ?? START
  return new Map(partitions.map((partition) => [partition, stored.get(partitionCheckpoint(partition)) ?? unpartitioned]))
}

/** How far the engine has driven every session: the earliest checkpoint of its partitions, as many as the database records. */
export async function engineCheckpoint(db: DbOrTrx): Promise<Position> {
  const count = (await recordedPartitionCount(db)) ?? DEFAULT_ENGINE_PARTITIONS
  return earliest((await partitionPositions(db, everyPartition(count))).values())
}

/** An engine configured with another partition count than the one the checkpoints were made with. */
export class PartitionCountMismatchError extends ConflictError {
  constructor(recorded: number, configured: number) {
    super(
      `ENGINE_PARTITIONS is ${configured}, but the engine's checkpoints in this database are for ${recorded} partitions: ` +
        `start with ENGINE_PARTITIONS=${recorded}, or stop every engine process and run 'flowd engine repartition --partitions ${configured}'`,
    )
  }
}

/** The checkpoint of every partition there can be, in order. */
const ANY_PARTITION_CHECKPOINT = everyPartition(MAX_ENGINE_PARTITIONS).map(partitionCheckpoint)

/** The highest partition that has a checkpoint, plus one: the count a database was run with before the count was recorded. */
const countShownByCheckpoints = sql<number>`(
  select max(array_position(${ANY_PARTITION_CHECKPOINT}::text[], projection)) from projection_checkpoints where projection = any(${ANY_PARTITION_CHECKPOINT}::text[])
)`

/** The partition count the database records; undefined before an engine first started. */
export async function recordedPartitionCount(db: DbOrTrx): Promise<number | undefined> {
  const row = await db.selectFrom('engine_partition_count').select('partitions').executeTakeFirst()
  return row?.partitions
}

/**
 * Records `count` as the partition count, unless one is recorded (or, before the count was
 * recorded, the partition checkpoints show one), and answers the recorded count.
 */
async function recordPartitionCount(db: DbOrTrx, count: number): Promise<number> {
  await sql`
    insert into engine_partition_count (partitions) select coalesce(${countShownByCheckpoints}, ${count}::integer)
    on conflict (only_row) do nothing`.execute(db)
  return (await recordedPartitionCount(db))!
}

/**
 * Makes sure the engine's checkpoints were made for `configured` partitions, the first engine to
 * start recording its count; throws {@link PartitionCountMismatchError} when they were not.
 */
export async function checkPartitionCount(db: DbOrTrx, configured: number): Promise<void> {
  const recorded = await recordPartitionCount(db, configured)
  if (recorded !== configured) throw new PartitionCountMismatchError(recorded, configured)
}

export interface Repartitioned {
  from: number
  to: number
  /** Where every partition goes on from: the earliest checkpoint of the old ones. */
  position: Position
}

/**
 * Changes the partition count to `to`. Every new partition goes on from the earliest checkpoint
 * of the old ones, so no session loses a turn: the turns after it found done are not run again (a
 * turn is appended at the revision it read, with an id derived from its trigger; kanban actions
 * are idempotent). Refused while an engine process holds a partition lease: it drives sessions by
 * the old count. Its leases are held until the change is committed, so none starts meanwhile.
 */
export async function repartition(db: Kysely<Database>, to: number): Promise<Repartitioned> {
  return db.transaction().execute(async (trx) => {
    await recordPartitionCount(trx, to)
    const { partitions: from } = await trx.selectFrom('engine_partition_count').select('partitions').forUpdate().executeTakeFirstOrThrow()
    if (!(await holdLeasesFor(trx, everyPartition(Math.max(from, to)).map(partitionLease)))) {
      throw new ConflictError('an engine process holds partitions of the sessions: stop every engine process, then repartition')
    }
    const position = earliest((await partitionPositions(trx, everyPartition(from))).values())
    await sql`delete from projection_checkpoints where projection = any(${ANY_PARTITION_CHECKPOINT}::text[])`.execute(trx)
    await sql`
      insert into projection_checkpoints (projection, position_commit, position_prepare)
      select name, ${String(position.commit)}::bigint, ${String(position.prepare)}::bigint from unnest(${everyPartition(to).map(partitionCheckpoint)}::text[]) as name`.execute(trx)
    await trx.updateTable('engine_partition_count').set({ partitions: to, recorded_at: sql`now()` }).execute()
    return { from, to, position }
  })
}

/** The earliest of `positions`; START when there are none. */
export const earliest = (positions: Iterable<Position>): Position => [...positions].reduce<Position | undefined>((min, p) => (min && comparePositions(min, p) <= 0 ? min : p), undefined) ?? START

/** The most partitions one of `processes` engine processes holds, so that every process gets a share. */
export const fairShare = (count: number, processes: number): number => Math.ceil(count / Math.max(1, processes))

/**
 * Holds this process's share of the partitions: every `retryMs` it counts the engine processes,
 * takes free partitions up to its share and hands back those beyond it. `apply` is called with the
 * partitions to drive whenever they change, before any lease is released, so a partition is
 * never handed back while its sessions are still being driven here.
 */
export class PartitionLeases {
  private readonly held = new Map<number, Lease>()
  /** The partitions last given to `apply`. */
  private driving = ''
  /** Ends the pause between two balances: when a lease is lost (its connection failed), its sessions stop being driven here at once. */
  private wake = new AbortController()

  private readonly leases: Leases
  private readonly count: number
  private readonly apply: (partitions: number[]) => Promise<void>
  private readonly logger: Logger
  private readonly retryMs: number

  constructor(leases: Leases, count: number, apply: (partitions: number[]) => Promise<void>, logger: Logger, retryMs = LEASE_RETRY_MS) {
    this.leases = leases
    this.count = count
    this.apply = apply
    this.logger = logger
    this.retryMs = retryMs
  }

  /** Balances until `signal` aborts, then stops driving and releases every partition. */
  async run(signal: AbortSignal): Promise<void> {
    const stop = () => this.wake.abort()
    signal.addEventListener('abort', stop, { once: true })
    try {
      for (;;) {
        this.wake = new AbortController()
        if (signal.aborted) break
        await this.balance().catch((error: unknown) => this.logger.error({ err: error }, 'engine partitions not applied; trying again'))
        await delay(this.retryMs, undefined, { signal: this.wake.signal }).catch(() => {})
      }
    } finally {
      signal.removeEventListener('abort', stop)
      await this.apply([])
      await Promise.all([...this.held.values()].map((lease) => lease.release()))
      this.held.clear()
    }
  }

  private async balance(): Promise<void> {
    for (const [partition, lease] of this.held) if (lease.lost.aborted) this.held.delete(partition)
    let handing: Lease[] = []
    try {
      const share = fairShare(this.count, await this.leases.processes())
      await this.takeUpTo(share)
      handing = this.handBackBeyond(share)
    } catch (error) {
      // Partitions lost meanwhile still stop being driven, below.
      this.logger.warn({ err: error }, 'could not balance the engine partitions; trying again')
    }
    try {
      const partitions = this.partitions()
      if (partitions.join() === this.driving) return
      await this.apply(partitions)
      this.driving = partitions.join()
    } finally {
      await Promise.all(handing.map((lease) => lease.release()))
    }
  }

  private async takeUpTo(share: number): Promise<void> {
    // From a random partition on, so processes starting together do not all ask for the same ones first.
    const offset = Math.floor(Math.random() * this.count)
    for (let i = 0; i < this.count && this.held.size < share; i++) {
      const partition = (offset + i) % this.count
      if (this.held.has(partition)) continue
      const lease = await this.leases.tryAcquire(partitionLease(partition))
      if (!lease) continue
      this.held.set(partition, lease)
      lease.lost.addEventListener('abort', () => this.wake.abort(), { once: true })
    }
  }

  /** Takes the partitions beyond `share` off those held; their leases, returned, are released once they are no longer driven. */
  private handBackBeyond(share: number): Lease[] {
    return this.partitions()
      .slice(share)
      .map((partition) => {
        const lease = this.held.get(partition)!
        this.held.delete(partition)
        return lease
      })
  }

  private partitions(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b)
  }
}
