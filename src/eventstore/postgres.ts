import { CompiledQuery, sql, type Kysely, type SqlBool } from 'kysely'
import type pg from 'pg'
import { NON_APPENDING_APPLICATION_NAMES } from '../store/connect.js'
import { prepared } from '../store/prepared.js'
import { WriteBatches } from '../store/write-batches.js'
import { toBigInt, type Database, type DbOrTrx } from '../store/database.js'
import {
  START,
  comparePositions,
  headsOfFilters,
  prefixesOf,
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type LogBatch,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamFilter,
  type SubscribeOptions,
} from './port.js'
import { LiveTail, type Page } from './live-tail.js'
import { WakeUp } from './wake-up.js'

export interface PostgresEventStoreOptions {
  db: Kysely<Database>
  /**
   * Postgres only: appends run on it as prepared statements, and a LISTEN connection from it wakes
   * subscribers on appends of other processes.
   */
  pool?: pg.Pool
  /** false: appends send no NOTIFY (only where no other process follows this log: benchmarks). */
  notifyOtherProcesses?: boolean
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
  created_at: string
}

const UNIQUE_VIOLATION = '23505'

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

const isUniqueViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNIQUE_VIOLATION

/**
 * A batch up to its last event: a checkpoint saved further on (at a page's `through`) would cost a
 * write per wake-up of every idle subscriber, and the live tail already spares it the re-reading.
 */
const throughLastEvent = (events: RecordedEvent[]): LogBatch => ({ events, through: events[events.length - 1]!.position })

const toRecorded = (row: EventRow): RecordedEvent => ({
  id: row.event_id,
  type: row.event_type,
  data: row.data,
  metadata: row.metadata ?? {},
  stream: row.stream_id,
  revision: toBigInt(row.stream_revision),
  position: { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) },
  createdAt: row.created_at,
})

/**
 * Every transaction that could still append has a larger id: events below it can no longer be
 * preceded. That is the oldest transaction running in the statement's snapshot, leaving out those
 * known not to append: transactions of other databases of the cluster (a long one there must not
 * stall this service) and of the projector and dispatcher connections. A transaction is left out only on positive
 * knowledge (its backend's xid, database and name, all fixed for the backend's life); when in doubt
 * it counts, as in the plain rule (`pg_snapshot_xmin`). Xids are compared on their low 32 bits, as
 * the activity view shows them.
 */
const horizon = sql`coalesce(
  (select min(xip::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) xip
   where xip::text::bigint % 4294967296 not in (
     select backend_xid::text::bigint from pg_stat_get_activity(null)
     where backend_xid is not null
       and (datid <> (select oid from pg_database where datname = current_database()) or application_name = any(${NON_APPENDING_APPLICATION_NAMES}::text[])))),
  pg_snapshot_xmax(pg_current_snapshot())::text::bigint)`

// `created_at` as RecordedEvent has it (ISO 8601, UTC, milliseconds cut off as a Date's are):
// formatted by the database rather than parsed into a Date and formatted again for every event read.
const eventColumns = sql`global_position, transaction_id, event_id, stream_id, stream_revision,
  event_type, data, metadata, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at`

export interface NamedStatement {
  name: string
  text: string
}

type RevisionCheck = 'no_stream' | 'exact'

/**
 * Moves the stream's revision ($1) forward by `count` and returns the new last revision, or no
 * row when the expectation does not hold; `exact` compares with $2.
 */
const reserveRevisions = (count: string): Record<RevisionCheck, string> => ({
  no_stream: `insert into streams (stream_id, revision) values ($1, ${count} - 1)
    on conflict (stream_id) do nothing returning revision`,
  exact: `update streams set revision = revision + ${count} where stream_id = $1 and revision = $2::bigint returning revision`,
})

const checks: RevisionCheck[] = ['no_stream', 'exact']
/** The first parameter after the stream and, for `exact`, the expected revision. */
const firstFree = (check: RevisionCheck) => (check === 'exact' ? 3 : 2)

/** One event (the usual case): its id, type, data and metadata as parameters, no JSON array to unpack. */
const appendOne = Object.fromEntries(
  checks.map((check) => {
    const p = firstFree(check)
    const text = `with reserved as (${reserveRevisions('1')[check]})
      insert into events (event_id, stream_id, stream_revision, event_type, data, metadata)
      select $${p}::uuid, $1, revision, $${p + 1}, $${p + 2}::jsonb, $${p + 3}::jsonb from reserved
      returning global_position, transaction_id, stream_revision`
    return [check, { name: `flowd_append_one_${check}`, text }]
  }),
) as Record<RevisionCheck, NamedStatement>

/** Several events: their count and a JSON array of them. */
const appendMany = Object.fromEntries(
  checks.map((check) => {
    const p = firstFree(check)
    const text = `with reserved as (${reserveRevisions(`$${p}::bigint`)[check]}),
      inserted as (
        insert into events (event_id, stream_id, stream_revision, event_type, data, metadata)
        select (e.value->>'id')::uuid, $1, reserved.revision - $${p}::bigint + e.ordinality, e.value->>'type', e.value->'data', e.value->'metadata'
        from reserved cross join jsonb_array_elements($${p + 1}::jsonb) with ordinality as e(value, ordinality)
        order by e.ordinality
        returning global_position, transaction_id, stream_revision
      )
      select global_position, transaction_id, stream_revision from inserted order by global_position desc limit 1`
    return [check, { name: `flowd_append_many_${check}`, text }]
  }),
) as Record<RevisionCheck, NamedStatement>

/**
 * Appends to many streams in one statement and one transaction, each on its own expected revision
 * (`expected` null: no stream yet). The stream rows are locked in stream order, so two groups
 * touching the same streams wait for each other instead of deadlocking. An append whose revision
 * does not hold reserves nothing and inserts nothing; the others go on. One row per append that
 * went in: its stream, and its last event's position and revision. `$2` lists the streams expected
 * to exist, found by `= any`, an index lookup in any plan: a join on the JSON let the generic plan,
 * cached while the table was small, read the whole table on every append.
 */
export const appendGroup: NamedStatement = {
  name: 'flowd_append_group',
  text: `with input as (
      select a.value->>'stream' as stream_id, (a.value->>'expected')::bigint as expected,
        jsonb_array_length(a.value->'events') as n, a.value->'events' as events, a.ordinality as i
      from jsonb_array_elements($1::jsonb) with ordinality as a(value, ordinality)
    ),
    locked as (
      select s.stream_id, s.revision from streams s
      where s.stream_id = any($2::text[])
      order by s.stream_id
      for update
    ),
    moved as (
      update streams s set revision = s.revision + input.n
      from locked join input using (stream_id)
      where s.stream_id = any($2::text[]) and s.stream_id = locked.stream_id and locked.revision = input.expected
      returning s.stream_id, s.revision
    ),
    created as (
      insert into streams (stream_id, revision)
      select stream_id, n - 1 from input where expected is null order by stream_id
      on conflict (stream_id) do nothing
      returning stream_id, revision
    ),
    reserved as (
      select input.i, input.stream_id, input.n, input.events, r.revision as last
      from input join (select stream_id, revision from moved union all select stream_id, revision from created) r using (stream_id)
    ),
    inserted as (
      insert into events (event_id, stream_id, stream_revision, event_type, data, metadata)
      select (e.value->>'id')::uuid, reserved.stream_id, reserved.last - reserved.n + e.ordinality, e.value->>'type', e.value->'data', e.value->'metadata'
      from reserved cross join jsonb_array_elements(reserved.events) with ordinality as e(value, ordinality)
      order by reserved.i, e.ordinality
      returning global_position, transaction_id, stream_id, stream_revision
    )
    select stream_id, max(global_position) as global_position, max(transaction_id) as transaction_id, max(stream_revision) as stream_revision
    from inserted group by stream_id`,
}

interface RefusalRow {
  revision: string | number | null
  found: string | number
  all_in_stream: boolean | null
  last_revision: string | number | null
  last_commit: string | number | null
  last_prepare: string | number | null
}

/** For {@link PostgresEventStore.afterRefusal}: the stream's revision ($1), and which of the event ids ($2) are stored, where. */
const appendedAlready: NamedStatement = {
  name: 'flowd_appended_already',
  text: `select (select revision from streams where stream_id = $1) as revision,
      count(*) as found, bool_and(stream_id = $1) as all_in_stream,
      max(stream_revision) as last_revision,
      (array_agg(transaction_id order by stream_revision desc))[1] as last_commit,
      (array_agg(global_position order by stream_revision desc))[1] as last_prepare
    from events where event_id = any($2::uuid[])`,
}

interface CheckedAppend {
  stream: string
  events: readonly NewEvent[]
  expected: Exclude<ExpectedRevision, 'any'>
}

/**
 * The event store on a Postgres table (also on PGlite). Readers follow the gap rule: they see only
 * events of transactions older than every transaction still running, in (transaction_id,
 * global_position) order, so a reader's checkpoint can never pass an event that commits later.
 */
/**
 * A stream's events read through `db`, which may be a transaction: one that holds a lock the log's
 * writers and readers wait on sees the stream as of that lock (and the embedded database, one
 * connection, has no other to read it on meanwhile).
 */
export async function readStreamThrough(db: DbOrTrx, stream: string, from = 0n): Promise<RecordedEvent[]> {
  const query = sql<EventRow>`
    select ${eventColumns} from events
    where stream_id = ${stream} and stream_revision >= ${String(from)}::bigint
    order by stream_revision`.compile(db)
  const { rows } = await db.executeQuery(prepared(query))
  return rows.map(toRecorded)
}

/**
 * The events of `streamPrefixes` after `from` up to and including `through`, read through `db`
 * (a transaction, to read the log as of its snapshot). Every event up to `through` is committed
 * when a reader has already got there, so no horizon is needed. `limit`: the first that many only.
 */
export async function readAllThrough(db: DbOrTrx, { streamPrefixes, from, through, limit }: StreamFilter & { from: Position; through: Position; limit?: number }): Promise<RecordedEvent[]> {
  const { rows } = await sql<EventRow>`
    select ${eventColumns} from events
    where (transaction_id, global_position) > (${String(from.commit < 0n ? 0n : from.commit)}::bigint, ${String(from.prepare)}::bigint)
      and (transaction_id, global_position) <= (${String(through.commit)}::bigint, ${String(through.prepare)}::bigint)
      and ${streamCondition({ streamPrefixes })}
    order by transaction_id, global_position
    ${limit === undefined ? sql`` : sql`limit ${limit}`}`.execute(db)
  return rows.map(toRecorded)
}

function streamCondition({ streamPrefixes }: StreamFilter) {
  if (!streamPrefixes?.length) return sql<SqlBool>`true`
  return sql<SqlBool>`(${sql.join(
    streamPrefixes.map((prefix) => sql`starts_with(stream_id, ${prefix})`),
    sql` or `,
  )})`
}

export interface PrefixHeadRow {
  prefix: string
  transaction_id: string | number | null
  global_position: string | number | null
}

/**
 * The newest visible event of each prefix (`''`: of every stream), one row per prefix, all under
 * one horizon: per prefix a backward walk of the (transaction_id, global_position) index that stops
 * at its first match, as {@link PostgresEventStore.headPosition} does. The prefixes are one array
 * parameter, so the text is the same for any number of them.
 */
export const prefixHeads = (prefixes: readonly string[]) => sql<PrefixHeadRow>`
  select p.prefix, head.transaction_id, head.global_position
  from (select ${horizon} as xid) as horizon
  cross join unnest(${[...prefixes]}::text[]) as p(prefix)
  left join lateral (
    select transaction_id, global_position from events
    where transaction_id < horizon.xid and starts_with(stream_id, p.prefix)
    order by transaction_id desc, global_position desc limit 1
  ) head on true`

/** What {@link prefixHeads} asks for the filters, and each filter's head from its rows. */
export function filterHeads(filters: readonly StreamFilter[]): { prefixes: string[]; headsOf(rows: readonly PrefixHeadRow[]): Position[] } {
  return {
    prefixes: [...new Set(filters.flatMap(prefixesOf))],
    headsOf: (rows) =>
      headsOfFilters(
        filters,
        new Map(
          rows.flatMap((row) => (row.transaction_id == null || row.global_position == null ? [] : [[row.prefix, { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) }] as const])),
        ),
      ),
  }
}

/**
 * Group-commit statements in flight at once: an append arriving while one group commits starts the
 * next at once instead of waiting for it. More than two only adds commits (docs/decisions/sessions-and-engine.md).
 */
const APPENDS_IN_FLIGHT = 2

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const
  private readonly db: Kysely<Database>
  private readonly wakeUp: WakeUp
  private readonly channel: string
  private readonly pollIntervalMs: number
  private readonly tail: LiveTail
  private readonly pool: pg.Pool | undefined
  /** Concurrent checked appends, written together (group commit), never two of one stream at once. */
  private readonly appends = new WriteBatches<CheckedAppend, AppendResult>((appends) => this.appendTogether(appends), { maxBatch: 256, keyOf: (append) => append.stream, maxInFlight: APPENDS_IN_FLIGHT })

  constructor(options: PostgresEventStoreOptions) {
    this.db = options.db
    this.pool = options.pool
    this.channel = options.channel ?? 'flowd_events'
    if (!/^[a-z_][a-z0-9_]*$/.test(this.channel)) throw new Error(`invalid notification channel ${this.channel}`)
    this.wakeUp = new WakeUp(this.channel, options.pool, { notifyOtherProcesses: options.notifyOtherProcesses ?? true })
    this.pollIntervalMs = options.pollIntervalMs ?? 250
    this.tail = new LiveTail((page) => this.readPage(page), this.wakeUp, this.pollIntervalMs)
  }

  async append(stream: string, events: readonly NewEvent[], { expectedRevision }: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event')
    try {
      const result = expectedRevision === 'any' ? await this.appendAtAnyRevision(stream, events) : await this.appends.add({ stream, events, expected: expectedRevision })
      this.wakeUp.announce()
      return result
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError || isUniqueViolation(error))) throw error
      const { revision, repeated } = await this.afterRefusal(stream, events)
      if (repeated) return repeated
      throw new WrongExpectedVersionError(stream, expectedRevision, revision ?? 'no_stream')
    }
  }

  /**
   * `any` is a checked append at the revision found, again until one holds. An unchecked one (the
   * stream row's revision moved by whatever it is) gets its transaction id before it waits for
   * that row, so an appender it waited for could hold the earlier revision under a later id, and
   * the log, read in transaction id order, would have the two out of revision order. A checked
   * append that waited for another finds the revision moved and inserts nothing.
   */
  private async appendAtAnyRevision(stream: string, events: readonly NewEvent[]): Promise<AppendResult> {
    for (;;) {
      try {
        return await this.appendInOneStatement(stream, events, (await this.currentRevision(stream)) ?? 'no_stream')
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error
      }
    }
  }

  /**
   * Reserves the revisions (under the stream row's lock, which serialises appenders of one stream)
   * and inserts the events in a single statement: one round trip, its own transaction. No reserved
   * row (the revision check failed) inserts nothing. The statement's text is fixed per kind of
   * expected revision, so on Postgres it is prepared once per connection.
   */
  private async appendInOneStatement(stream: string, events: readonly NewEvent[], expected: Exclude<ExpectedRevision, 'any'>): Promise<AppendResult> {
    const check = typeof expected === 'bigint' ? 'exact' : expected
    const revisionParameter = typeof expected === 'bigint' ? [String(expected)] : []
    const single = events.length === 1 ? events[0] : undefined
    const statement = single ? appendOne[check] : appendMany[check]
    const values = single
      ? [stream, ...revisionParameter, single.id, single.type, JSON.stringify(single.data ?? null), JSON.stringify(single.metadata ?? {})]
      : [stream, ...revisionParameter, String(events.length), JSON.stringify(events.map((e) => ({ id: e.id, type: e.type, data: e.data ?? null, metadata: e.metadata ?? {} })))]
    const rows = await this.execute<{ global_position: string | number; transaction_id: string | number; stream_revision: string | number }>(statement, values)
    const last = rows[0]
    if (!last) throw new WrongExpectedVersionError(stream, expected, 'unknown')
    return { nextRevision: toBigInt(last.stream_revision), position: { commit: toBigInt(last.transaction_id), prepare: toBigInt(last.global_position) } }
  }

  /**
   * A batch of checked appends to distinct streams (see {@link WriteBatches}): one alone takes the
   * one-stream statement; several take one statement together. Should that fail as a whole (an
   * event id stored already, a lost connection), each is tried alone, for an answer of its own.
   */
  private async appendTogether(appends: CheckedAppend[]): Promise<(AppendResult | Error)[]> {
    const alone = (append: CheckedAppend) => this.appendInOneStatement(append.stream, append.events, append.expected).catch((error: unknown) => asError(error))
    if (appends.length === 1) return [await alone(appends[0]!)]
    let rows: { stream_id: string; global_position: string | number; transaction_id: string | number; stream_revision: string | number }[]
    try {
      const input = appends.map(({ stream, expected, events }) => ({
        stream,
        expected: expected === 'no_stream' ? null : String(expected),
        events: events.map((e) => ({ id: e.id, type: e.type, data: e.data ?? null, metadata: e.metadata ?? {} })),
      }))
      const existing = appends.filter((append) => append.expected !== 'no_stream').map((append) => append.stream)
      rows = await this.execute(appendGroup, [JSON.stringify(input), existing])
    } catch {
      return Promise.all(appends.map(alone))
    }
    const appended = new Map(rows.map((row) => [row.stream_id, row]))
    return appends.map(({ stream, expected }) => {
      const row = appended.get(stream)
      if (!row) return new WrongExpectedVersionError(stream, expected, 'unknown')
      return { nextRevision: toBigInt(row.stream_revision), position: { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) } }
    })
  }

  /** Runs a fixed statement: on Postgres by name (parsed and planned once per connection), on PGlite through kysely. */
  private async execute<Row>(statement: NamedStatement, values: unknown[]): Promise<Row[]> {
    if (this.pool) return (await this.pool.query<Row & pg.QueryResultRow>({ name: statement.name, text: statement.text, values })).rows
    return (await this.db.executeQuery<Row>(CompiledQuery.raw(statement.text, values))).rows
  }

  private async currentRevision(stream: string): Promise<bigint | undefined> {
    const row = await this.db.selectFrom('streams').select('revision').where('stream_id', '=', stream).executeTakeFirst()
    return row ? toBigInt(row.revision) : undefined
  }

  /**
   * After a checked append was refused, in one round trip: the stream's revision now, and, when
   * every one of its events is stored in the stream already (a retried append), the original result,
   * which the retry then answers without writing them again.
   */
  private async afterRefusal(stream: string, events: readonly NewEvent[]): Promise<{ revision: bigint | undefined; repeated: AppendResult | undefined }> {
    const [row] = await this.execute<RefusalRow>(appendedAlready, [stream, events.map((e) => e.id)])
    const repeated =
      row && Number(row.found) === events.length && row.all_in_stream && row.last_revision != null
        ? { nextRevision: toBigInt(row.last_revision), position: { commit: toBigInt(row.last_commit!), prepare: toBigInt(row.last_prepare!) } }
        : undefined
    return { revision: row?.revision == null ? undefined : toBigInt(row.revision), repeated }
  }

  async readStream(stream: string, options: { from?: bigint } = {}): Promise<RecordedEvent[]> {
    return readStreamThrough(this.db, stream, options.from)
  }

  async readAll({ from, limit, streamPrefixes }: ReadAllOptions): Promise<RecordedEvent[]> {
    const commit = from.commit < 0n ? 0n : from.commit
    const { rows } = await sql<EventRow>`
      select ${eventColumns} from events
      where (transaction_id, global_position) > (${String(commit)}::bigint, ${String(from.prepare)}::bigint)
        and transaction_id < ${horizon}
        and ${streamCondition({ streamPrefixes })}
      order by transaction_id, global_position
      limit ${limit}`.execute(this.db)
    return rows.map(toRecorded)
  }

  /**
   * Like {@link readAll}, and also how far the log was read: the newest visible event of any
   * stream when the page is not full. A subscriber moves on to there, so it never scans again the
   * events of other streams it has already passed over.
   */
  private async readPage({ from, limit, streamPrefixes }: ReadAllOptions): Promise<Page> {
    const commit = from.commit < 0n ? 0n : from.commit
    // Prepared: the live tail runs it on every wake-up, and its planning cost more than its run.
    const query = sql<Partial<EventRow> & { head_commit: string | number; head_prepare: string | number }>`
      with head as (
        select transaction_id, global_position from events
        where transaction_id < ${horizon}
        order by transaction_id desc, global_position desc
        limit 1
      )
      select head.transaction_id as head_commit, head.global_position as head_prepare, page.*
      from head left join lateral (
        select ${eventColumns} from events
        where (transaction_id, global_position) > (${String(commit)}::bigint, ${String(from.prepare)}::bigint)
          and (transaction_id, global_position) <= (head.transaction_id, head.global_position)
          and ${streamCondition({ streamPrefixes })}
        order by transaction_id, global_position
        limit ${limit}
      ) page on true`.compile(this.db)
    const { rows } = await this.db.executeQuery(prepared(query))
    const head = rows[0]
    if (!head) return { events: [], through: from }
    const events = rows.filter((row) => row.event_id != null).map((row) => toRecorded(row as EventRow))
    const through = events.length === limit ? events[events.length - 1]!.position : { commit: toBigInt(head.head_commit), prepare: toBigInt(head.head_prepare) }
    return { events, through: comparePositions(through, from) > 0 ? through : from }
  }

  /**
   * Catches up with reads of its own (filtered, so a subscriber far behind reads only its streams),
   * then follows the live tail this process shares; back to catching up if it falls behind.
   */
  async *subscribeAll({ from, streamPrefixes, signal, maxBatch = 500 }: SubscribeOptions): AsyncIterable<LogBatch> {
    const filter = { streamPrefixes }
    let position: Position = from
    while (!signal?.aborted) {
      let page: Page
      try {
        page = await this.readPage({ from: position, limit: maxBatch, streamPrefixes })
      } catch {
        if (signal?.aborted) return
        await this.wakeUp.wait(this.pollIntervalMs, signal)
        continue
      }
      position = page.through
      if (page.events.length > 0) yield throughLastEvent(page.events)
      if (page.events.length === maxBatch) continue
      const member = this.tail.join(filter, maxBatch, position)
      if (!member) {
        // The tail is ahead of the newest event this read could see: read again in a moment.
        await this.wakeUp.wait(2, signal)
        continue
      }
      try {
        for (;;) {
          const events = await member.take(signal)
          if (events.length === 0) break
          yield throughLastEvent(events)
        }
      } finally {
        this.tail.leave(member)
      }
      position = member.position
    }
  }

  /** From the streams' revisions, without reading the log: a stream holds its last revision + 1 events, as nothing is ever removed. */
  async count(filter: StreamFilter = {}): Promise<number> {
    const { rows } = await sql<{ count: string | number }>`select coalesce(sum(revision + 1), 0) as count from streams where ${streamCondition(filter)}`.execute(this.db)
    return Number(rows[0]?.count ?? 0)
  }

  async headPosition(filter: StreamFilter = {}): Promise<Position> {
    const { rows } = await sql<{ transaction_id: string | number; global_position: string | number }>`
      select transaction_id, global_position from events
      where transaction_id < ${horizon} and ${streamCondition(filter)}
      order by transaction_id desc, global_position desc limit 1`.execute(this.db)
    const row = rows[0]
    return row ? { commit: toBigInt(row.transaction_id), prepare: toBigInt(row.global_position) } : START
  }

  async headPositions(filters: readonly StreamFilter[]): Promise<Position[]> {
    if (filters.length === 0) return []
    const { prefixes, headsOf } = filterHeads(filters)
    const { rows } = await this.db.executeQuery(prepared(prefixHeads(prefixes).compile(this.db)))
    return headsOf(rows)
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db)
  }

  async close(): Promise<void> {
    await this.tail.close()
    await this.wakeUp.close()
  }
}
