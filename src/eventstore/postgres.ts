import { sql, type Kysely, type SqlBool, type Transaction } from 'kysely'
import type pg from 'pg'
import { toBigInt, type Database } from '../store/database.js'
import {
  START,
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamFilter,
  type SubscribeOptions,
} from './port.js'
import { WakeUp } from './wake-up.js'

export interface PostgresEventStoreOptions {
  db: Kysely<Database>
  /** Postgres only: a LISTEN connection from it wakes subscribers on appends of other processes. */
  pool?: pg.Pool
  channel?: string
  /** Longest a live subscription waits before looking again without a wake-up. */
  pollIntervalMs?: number
}

interface EventRow {
  global_position: string | number
  transaction_id: string | number
  event_id: string
  stream_id: string
  stream_revision: string | number
  event_type: string
  data: unknown
  metadata: Record<string, unknown>
  created_at: Date | string
}

const UNIQUE_VIOLATION = '23505'

const isUniqueViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNIQUE_VIOLATION

const toRecorded = (row: EventRow): RecordedEvent => ({
  id: row.event_id,
  type: row.event_type,
  data: row.data,
  metadata: row.metadata ?? {},
  stream: row.stream_id,
  revision: toBigInt(row.stream_revision),
  position: { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) },
  createdAt: new Date(row.created_at).toISOString(),
})

/** Every transaction with a smaller id has ended: events below it can no longer be preceded. */
const horizon = sql`(pg_snapshot_xmin(pg_current_snapshot())::text)::bigint`

const eventColumns = sql`global_position, transaction_id, event_id, stream_id, stream_revision,
  event_type, data, metadata, created_at`

/**
 * The event store on a Postgres table (also on PGlite). Readers follow the gap rule: they see only
 * events of transactions older than every transaction still running, in (transaction_id,
 * global_position) order, so a reader's checkpoint can never pass an event that commits later.
 */
export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const
  private readonly db: Kysely<Database>
  private readonly wakeUp: WakeUp
  private readonly channel: string
  private readonly notifiesOtherProcesses: boolean
  private readonly pollIntervalMs: number

  constructor(options: PostgresEventStoreOptions) {
    this.db = options.db
    this.channel = options.channel ?? 'flowd_events'
    if (!/^[a-z_][a-z0-9_]*$/.test(this.channel)) throw new Error(`invalid notification channel ${this.channel}`)
    this.notifiesOtherProcesses = options.pool !== undefined
    this.wakeUp = new WakeUp(this.channel, options.pool)
    this.pollIntervalMs = options.pollIntervalMs ?? 250
  }

  async append(stream: string, events: readonly NewEvent[], { expectedRevision }: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event')
    try {
      const result = await this.db.transaction().execute((trx) => this.appendInTransaction(trx, stream, events, expectedRevision))
      this.wakeUp.wake()
      return result
    } catch (error) {
      if (error instanceof WrongExpectedVersionError || isUniqueViolation(error)) {
        const repeated = await this.findAlreadyAppended(stream, events)
        if (repeated) return repeated
        if (isUniqueViolation(error)) {
          throw new WrongExpectedVersionError(stream, expectedRevision, (await this.currentRevision(stream)) ?? 'no_stream')
        }
      }
      throw error
    }
  }

  private async appendInTransaction(
    trx: Transaction<Database>,
    stream: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision,
  ): Promise<AppendResult> {
    const count = BigInt(events.length)
    const lastRevision = await this.reserveRevisions(trx, stream, count, expectedRevision)
    const firstRevision = lastRevision - count + 1n
    const inserted = await trx
      .insertInto('events')
      .values(
        events.map((event, index) => ({
          event_id: event.id,
          stream_id: stream,
          stream_revision: String(firstRevision + BigInt(index)),
          event_type: event.type,
          data: sql<string>`cast(${JSON.stringify(event.data ?? null)} as jsonb)`,
          metadata: sql<string>`cast(${JSON.stringify(event.metadata ?? {})} as jsonb)`,
        })),
      )
      .returning(['global_position', sql<string>`transaction_id`.as('transaction_id')])
      .execute()
    if (this.notifiesOtherProcesses) await sql`select pg_notify(${this.channel}, '')`.execute(trx)
    const last = inserted[inserted.length - 1]!
    return { nextRevision: lastRevision, position: { commit: toBigInt(last.transaction_id), prepare: toBigInt(last.global_position) } }
  }

  /** Moves the stream's revision forward under its row lock; the lock serialises appenders of one stream. */
  private async reserveRevisions(trx: Transaction<Database>, stream: string, count: bigint, expected: ExpectedRevision): Promise<bigint> {
    if (expected === 'any') {
      const row = await trx
        .insertInto('streams')
        .values({ stream_id: stream, revision: String(count - 1n) })
        .onConflict((oc) => oc.column('stream_id').doUpdateSet({ revision: sql`streams.revision + ${String(count)}::bigint` }))
        .returning('revision')
        .executeTakeFirstOrThrow()
      return toBigInt(row.revision)
    }
    if (expected === 'no_stream') {
      const row = await trx
        .insertInto('streams')
        .values({ stream_id: stream, revision: String(count - 1n) })
        .onConflict((oc) => oc.column('stream_id').doNothing())
        .returning('revision')
        .executeTakeFirst()
      if (!row) throw new WrongExpectedVersionError(stream, expected, (await this.currentRevision(stream, trx)) ?? 'unknown')
      return count - 1n
    }
    const row = await trx
      .updateTable('streams')
      .set({ revision: sql`revision + ${String(count)}::bigint` })
      .where('stream_id', '=', stream)
      .where('revision', '=', String(expected))
      .returning('revision')
      .executeTakeFirst()
    if (!row) throw new WrongExpectedVersionError(stream, expected, (await this.currentRevision(stream, trx)) ?? 'no_stream')
    return toBigInt(row.revision)
  }

  private async currentRevision(stream: string, db: Kysely<Database> = this.db): Promise<bigint | undefined> {
    const row = await db.selectFrom('streams').select('revision').where('stream_id', '=', stream).executeTakeFirst()
    return row ? toBigInt(row.revision) : undefined
  }

  /** A retried append whose events are all stored already succeeds without writing them again. */
  private async findAlreadyAppended(stream: string, events: readonly NewEvent[]): Promise<AppendResult | undefined> {
    const rows = await this.db
      .selectFrom('events')
      .select(['event_id', 'stream_id', 'stream_revision', 'global_position', sql<string>`transaction_id`.as('transaction_id')])
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .execute()
    if (rows.length !== events.length || rows.some((row) => row.stream_id !== stream)) return undefined
    const last = rows.reduce((a, b) => (toBigInt(a.stream_revision) > toBigInt(b.stream_revision) ? a : b))
    return {
      nextRevision: toBigInt(last.stream_revision),
      position: { commit: toBigInt(last.transaction_id), prepare: toBigInt(last.global_position) },
    }
  }

  async readStream(stream: string, options: { from?: bigint } = {}): Promise<RecordedEvent[]> {
    const { rows } = await sql<EventRow>`
      select ${eventColumns} from events
      where stream_id = ${stream} and stream_revision >= ${String(options.from ?? 0n)}::bigint
      order by stream_revision`.execute(this.db)
    return rows.map(toRecorded)
  }

  async readAll({ from, limit, streamPrefixes }: ReadAllOptions): Promise<RecordedEvent[]> {
    const commit = from.commit < 0n ? 0n : from.commit
    const { rows } = await sql<EventRow>`
      select ${eventColumns} from events
      where (transaction_id, global_position) > (${String(commit)}::bigint, ${String(from.prepare)}::bigint)
        and transaction_id < ${horizon}
        and ${this.streamCondition({ streamPrefixes })}
      order by transaction_id, global_position
      limit ${limit}`.execute(this.db)
    return rows.map(toRecorded)
  }

  private streamCondition({ streamPrefixes }: StreamFilter) {
    if (!streamPrefixes?.length) return sql<SqlBool>`true`
    return sql<SqlBool>`(${sql.join(
      streamPrefixes.map((prefix) => sql`starts_with(stream_id, ${prefix})`),
      sql` or `,
    )})`
  }

  async *subscribeAll({ from, streamPrefixes, signal, maxBatch = 500 }: SubscribeOptions): AsyncIterable<RecordedEvent[]> {
    let position: Position = from
    // After a wake-up the new events may still sit above the horizon (an older transaction is
    // still open); look again soon, backing off to the poll interval.
    let retryMs = 0
    while (!signal?.aborted) {
      let batch: RecordedEvent[]
      try {
        batch = await this.readAll({ from: position, limit: maxBatch, streamPrefixes })
      } catch (error) {
        if (signal?.aborted) return
        await this.wakeUp.wait(this.pollIntervalMs, signal)
        continue
      }
      if (batch.length > 0) {
        position = batch[batch.length - 1]!.position
        retryMs = 0
        yield batch
        if (batch.length === maxBatch) continue
      }
      const woken = await this.wakeUp.wait(retryMs || this.pollIntervalMs, signal)
      retryMs = woken ? 2 : retryMs && Math.min(retryMs * 2, this.pollIntervalMs)
    }
  }

  async count(filter: StreamFilter = {}): Promise<number> {
    const { rows } = await sql<{ count: string | number }>`select count(*) as count from events where ${this.streamCondition(filter)}`.execute(this.db)
    return Number(rows[0]?.count ?? 0)
  }

  async headPosition(filter: StreamFilter = {}): Promise<Position> {
    const { rows } = await sql<{ transaction_id: string | number; global_position: string | number }>`
      select transaction_id, global_position from events
      where transaction_id < ${horizon} and ${this.streamCondition(filter)}
      order by transaction_id desc, global_position desc limit 1`.execute(this.db)
    const row = rows[0]
    return row ? { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) } : START
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db)
  }

  async close(): Promise<void> {
    await this.wakeUp.close()
  }
}
