import { sql, type Insertable, type RawBuilder, type SelectQueryBuilder, type Selectable, type Transaction } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { SessionLogsTable } from '../store/tables/session-logs.js'
import { dateRangeSince, startOfNextUtcDay, type DateRange } from './date-range.js'
import { countRows, listPage, onePage, sqlDirection, type ListPage, type Paging } from './paging.js'
import { ALWAYS, ROWS_PER_STATEMENT, defineProjection, slices, type TypedFold } from './projection.js'
import { toIso } from './timestamps.js'

/** The log's status words (spec §3) for the session's states. */
export type LogStatus = 'running' | 'completed' | 'timeout' | 'error'

type NewSessionLog = Insertable<SessionLogsTable>

/** What a batch's messages, turns and expiries change in one session's log, merged. */
export interface LogChange {
  id: string
  expires_at: string | null
  warnings: number
  /** Set by the last turn that finished the session. */
  status: string | null
  finished_at: string | null
  /** The first expiry before any finishing turn of the batch: it times out a session still running. */
  expired_at: string | null
  /** The first failed turn before any finishing turn or expiry of the batch: it ends a session still running in error. */
  failed_at: string | null
}

/** The two tables of the read model: the logs, and apart from them the logs of preview sessions. */
export type LogTable = 'session_logs' | 'preview_session_logs'

/**
 * One statement of merged changes of many sessions, changing nothing where `onlyIf` is false.
 * `byIndex`: the logs are also named by `= any(ids)`, an index lookup in any plan, for the live
 * batch's prepared statement, whose generic plan, cached while the table was small, read the whole
 * table on every batch; a rebuild's bulk update, planned each time, joins faster without it.
 */
export const updateLogs = (table: LogTable, changes: readonly LogChange[], onlyIf: RawBuilder<boolean>, byIndex = false) => sql`
  update ${sql.table(table)} as s set
    expires_at = coalesce(v.expires_at, s.expires_at),
    warnings = s.warnings + v.warnings,
    status = case when v.status is not null then v.status when s.status <> 'running' then s.status
      when v.failed_at is not null then 'error' when v.expired_at is not null then 'timeout' else s.status end,
    finished_at = case when v.status is not null then v.finished_at when s.status <> 'running' then s.finished_at
      else coalesce(v.failed_at, v.expired_at, s.finished_at) end
  from jsonb_to_recordset(cast(${JSON.stringify(changes)} as jsonb))
    as v(id uuid, expires_at timestamptz, warnings integer, status text, finished_at timestamptz, expired_at timestamptz, failed_at timestamptz)
  where ${byIndex ? sql`s.id = any(${changes.map((change) => change.id)}::uuid[]) and` : sql``} s.id = v.id and ${onlyIf}`

/** One statement of new logs (a repeated start changes nothing), inserting nothing where `onlyIf` is false. */
const insertLogs = (table: LogTable, starts: readonly NewSessionLog[], onlyIf: RawBuilder<boolean>) => sql`
  insert into ${sql.table(table)} (id, workspace_id, organization_id, flow_id, flow_version, external_id, status, warnings, started_at, expires_at, finished_at)
  select v.id, v.workspace_id, v.organization_id, v.flow_id, v.flow_version, v.external_id, v.status, v.warnings, v.started_at, v.expires_at, v.finished_at
  from jsonb_to_recordset(cast(${JSON.stringify(starts)} as jsonb))
    as v(id uuid, workspace_id uuid, organization_id uuid, flow_id uuid, flow_version integer, external_id text, status text, warnings integer,
         started_at timestamptz, expires_at timestamptz, finished_at timestamptz)
  where ${onlyIf}
  on conflict (id) do nothing`

type SessionStarted = Extract<SessionEvent, { type: 'SessionStarted' }>['data']

const newSessionLog = (d: SessionStarted): NewSessionLog => ({
  id: d.sessionId,
  workspace_id: d.workspaceId,
  organization_id: d.organizationId,
  flow_id: d.flowId,
  flow_version: d.flowVersion,
  external_id: d.externalId,
  status: 'running',
  warnings: 0,
  started_at: d.startedAt,
  expires_at: d.expiresAt,
  finished_at: null,
})

/**
 * The logs a fold's events change: one insert of its starts (a start is its session's first event),
 * then one update merging, per session, the rest (the last expiry time, the warnings added up, the
 * last finishing turn's status, or else the first expiry's timeout).
 */
class SessionLogsFold implements TypedFold<SessionEvent> {
  private readonly starts: NewSessionLog[] = []
  private readonly previewStarts: NewSessionLog[] = []
  private readonly changes = new Map<string, LogChange>()

  get rowsHeld(): number {
    return this.starts.length + this.previewStarts.length + this.changes.size
  }

  async add(_db: DbOrTrx, events: readonly { event: SessionEvent }[]): Promise<void> {
    for (const { event } of events) this.addOne(event)
  }

  private addOne(event: SessionEvent): void {
    if (event.type === 'SessionStarted') {
      ;(event.data.preview ? this.previewStarts : this.starts).push(newSessionLog(event.data))
      return
    }
    const id = event.data.sessionId
    let change = this.changes.get(id)
    if (!change) this.changes.set(id, (change = { id, expires_at: null, warnings: 0, status: null, finished_at: null, expired_at: null, failed_at: null }))
    switch (event.type) {
      case 'MessageReceived':
        change.expires_at = event.data.expiresAt
        break
      case 'TurnCompleted':
        if (event.data.expiresAt !== undefined) change.expires_at = event.data.expiresAt
        change.warnings += event.data.output.warnings.length
        if (event.data.output.status !== 'active') {
          change.status = event.data.output.status
          change.finished_at = event.data.completedAt
        }
        break
      case 'SessionExpired':
        // Once the fold has finished the session, or expired it, a later expiry changes nothing.
        if (change.status === null && change.expired_at === null && change.failed_at === null) change.expired_at = event.data.expiredAt
        break
      case 'TurnFailed':
        if (change.status === null && change.expired_at === null && change.failed_at === null) change.failed_at = event.data.failedAt
        break
    }
  }

  /**
   * A session's later events do not say whether it is a preview: their changes go to both tables,
   * and only the one holding the session has a row to change. Preview sessions are few, so the
   * second update is cheap.
   */
  private parts(onlyIf: RawBuilder<boolean>, byIndex = false): RawBuilder<unknown>[] {
    const changes = [...this.changes.values()]
    return [
      ...slices(this.starts).map((rows) => insertLogs('session_logs', rows, onlyIf)),
      ...slices(this.previewStarts).map((rows) => insertLogs('preview_session_logs', rows, onlyIf)),
      ...slices(changes).map((rows) => updateLogs('session_logs', rows, onlyIf, byIndex)),
      ...slices(changes).map((rows) => updateLogs('preview_session_logs', rows, onlyIf, byIndex)),
    ]
  }

  async write(trx: Transaction<Database>): Promise<void> {
    for (const part of this.parts(ALWAYS)) await part.execute(trx)
  }

  /**
   * The same write as one statement with the checkpoint's move. Its parts all see the tables as
   * they were before it, so a batch that starts a session and changes it needs them written in turn.
   */
  inOneStatement(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined {
    if (this.rowsHeld > ROWS_PER_STATEMENT) return undefined
    if ([...this.starts, ...this.previewStarts].some((start) => this.changes.has(start.id))) return undefined
    return this.parts(checkpointMoved, true)
  }
}

export const sessionLogsProjection = defineProjection<SessionEvent>({
  name: 'session-logs',
  streamPrefixes: ['session-'],
  // The counts are written by triggers on session_logs (migration 0013), in the same transaction.
  tables: ['session_logs', 'session_log_counts', 'session_log_day_counts', 'preview_session_logs'],
  fold: () => new SessionLogsFold(),
})

export const SESSION_LOG_ORDER_COLUMNS = {
  startedAt: 'started_at',
  expiresAt: 'expires_at',
  finishedAt: 'finished_at',
  status: 'status',
  warnings: 'warnings',
  externalId: 'external_id',
} as const
export type SessionLogOrder = keyof typeof SESSION_LOG_ORDER_COLUMNS

export interface SessionLogQuery extends Paging {
  organizationId: string
  orderBy?: SessionLogOrder
  direction: 'ASC' | 'DESC'
  workspaceId?: string
  sessionId?: string
  status?: LogStatus
  dateRange?: DateRange
  /** The logs of preview sessions instead of the others. */
  preview?: boolean
  now: Date
}

export interface SessionLogEntry {
  id: string
  workspaceId: string
  flowId: string
  externalId: string | null
  status: LogStatus
  warnings: number
  startedAt: string
  expiresAt: string
  finishedAt: string | null
}


/** Order columns that may hold null (sorted last in either direction); the others are `not null`. */
const NULLABLE_ORDER_COLUMNS: ReadonlySet<string> = new Set(['finished_at', 'external_id'])

/**
 * Session logs of an organization; `dateRange` is on `startedAt`, in the filtered workspace's zone, else UTC.
 *
 * Read at scale (docs/performance.md, benchmark 5): a `not null` order column is ordered without
 * `nulls last` (the same rows in the same order) so that an index serves either direction; a page
 * past the first picks its ids from the index alone and then reads only those rows (a deep OFFSET
 * otherwise fetches every skipped row from the table); a page that is not full tells the total
 * itself, without counting; and the total of a fuller one comes from the kept counts.
 */
export async function listSessionLogs(db: DbOrTrx, query: SessionLogQuery): Promise<ListPage<SessionLogEntry>> {
  // A workspace's logs are all of its organization: once the workspace is known to be the
  // organization's, it filters alone, and its indexes serve a deep page without the table.
  if (query.workspaceId) {
    const owned = await db.selectFrom('workspaces').select('id').where('id', '=', query.workspaceId).where('organization_id', '=', query.organizationId).executeTakeFirst()
    if (!owned) return { content: [], totalElements: 0 }
  }
  const startedSince = await dateRangeSince(db, query)
  if (query.preview) return listPreviewSessionLogs(db, query, startedSince)
  let base = query.workspaceId
    ? db.selectFrom('session_logs').where('workspace_id', '=', query.workspaceId)
    : db.selectFrom('session_logs').where('organization_id', '=', query.organizationId)
  if (query.sessionId) base = base.where('id', '=', query.sessionId)
  if (query.status) base = base.where('status', '=', query.status)
  if (startedSince) base = base.where('started_at', '>=', startedSince)
  const direction = sqlDirection(query.direction)
  const column = SESSION_LOG_ORDER_COLUMNS[query.orderBy ?? 'startedAt']
  const ordered = <O>(q: SelectQueryBuilder<Database, 'session_logs', O>) =>
    (NULLABLE_ORDER_COLUMNS.has(column)
      ? q.orderBy(column, (ob) => (direction === 'desc' ? ob.desc().nullsLast() : ob.asc().nullsLast()))
      : q.orderBy(column, direction)
    ).orderBy('id', direction)
  const offset = query.page * query.size
  // Newest or oldest first, a deep page starts at the UTC day it falls in, skipping whole days by their kept counts.
  const skip = query.page > 0 && column === 'started_at' && !query.sessionId && !startedSince ? await wholeDaysBefore(db, query, offset, direction) : undefined
  const inPage = skip ? base.where('started_at', direction === 'asc' ? '>=' : '<', skip.boundary) : base
  const rows =
    query.page === 0
      ? await ordered(base.selectAll()).$call(onePage(query)).execute()
      : await ordered(
          db
            .selectFrom('session_logs')
            .selectAll()
            .where(
              'id',
              'in',
              ordered(inPage.select('id'))
                .limit(query.size)
                .offset(offset - (skip?.rows ?? 0)),
            ),
        ).execute()
  const totalElements = rows.length < query.size && (rows.length > 0 || query.page === 0) ? offset + rows.length : await countSessionLogs(db, query, base, startedSince)
  return { content: rows.map(toLogEntry), totalElements }
}

const toLogEntry = (row: Selectable<SessionLogsTable>): SessionLogEntry => ({
  id: row.id,
  workspaceId: row.workspace_id,
  flowId: row.flow_id,
  externalId: row.external_id,
  status: row.status as LogStatus,
  warnings: row.warnings,
  startedAt: toIso(row.started_at),
  expiresAt: toIso(row.expires_at),
  finishedAt: row.finished_at === null ? null : toIso(row.finished_at),
})

/** Logs of preview sessions: few, short-lived rows, so a plain page and count serve them. */
async function listPreviewSessionLogs(db: DbOrTrx, query: SessionLogQuery, startedSince: Date | undefined): Promise<ListPage<SessionLogEntry>> {
  let matching = db.selectFrom('preview_session_logs').where('organization_id', '=', query.organizationId)
  if (query.workspaceId) matching = matching.where('workspace_id', '=', query.workspaceId)
  if (query.sessionId) matching = matching.where('id', '=', query.sessionId)
  if (query.status) matching = matching.where('status', '=', query.status)
  if (startedSince) matching = matching.where('started_at', '>=', startedSince)
  const direction = sqlDirection(query.direction)
  const column = SESSION_LOG_ORDER_COLUMNS[query.orderBy ?? 'startedAt']
  const ordered = matching
    .selectAll()
    .orderBy(column, (ob) => (direction === 'desc' ? ob.desc().nullsLast() : ob.asc().nullsLast()))
    .orderBy('id', direction)
  return listPage({ matching, ordered }, query, toLogEntry)
}

/** The workspace of the kept counts that stand for every workspace of their organization (migration 0013). */
const EVERY_WORKSPACE = '00000000-0000-0000-0000-000000000000'

/** The kept counts of a log list's organization, workspace and status. */
function keptCounts(db: DbOrTrx, query: SessionLogQuery, table: 'session_log_counts' | 'session_log_day_counts') {
  let kept = db
    .selectFrom(table as 'session_log_counts')
    .where('organization_id', '=', query.organizationId)
    .where('workspace_id', '=', query.workspaceId ?? EVERY_WORKSPACE)
  if (query.status) kept = kept.where('status', '=', query.status)
  return kept
}

/**
 * The whole UTC days that come before row `offset` of a log list in `started_at` order, by the kept
 * day counts: the page starts at `boundary` (the first instant of its day, oldest first; the end of
 * its day, newest first), `rows` rows further on. None when the offset is past the end.
 */
async function wholeDaysBefore(db: DbOrTrx, query: SessionLogQuery, offset: number, direction: 'asc' | 'desc'): Promise<{ boundary: Date; rows: number } | undefined> {
  const days = await keptCounts(db, query, 'session_log_day_counts')
    .select([sql<string>`day::text`.as('day'), sql<string | number>`sum(n)`.as('n')])
    .groupBy('day')
    .orderBy('day', direction)
    .execute()
  let rows = 0
  for (const day of days) {
    const n = Number(day.n)
    if (rows + n > offset) {
      const start = new Date(`${day.day}T00:00:00.000Z`)
      return { boundary: direction === 'asc' ? start : new Date(start.getTime() + 86_400_000), rows }
    }
    rows += n
  }
  return undefined
}

/**
 * `totalElements` of a log list, exact: the counts kept per workspace and status (migration 0013),
 * per UTC day from the first whole day of a date range, plus the rows of its first partial day (a
 * workspace zone's midnight is not UTC's), counted. One session is counted directly.
 */
async function countSessionLogs(
  db: DbOrTrx,
  query: SessionLogQuery,
  matching: SelectQueryBuilder<Database, 'session_logs', object>,
  startedSince: Date | undefined,
): Promise<number> {
  if (query.sessionId) return countRows(matching)
  const scoped = (table: 'session_log_counts' | 'session_log_day_counts') => keptCounts(db, query, table)
  const sumKept = async (kept: SelectQueryBuilder<Database, 'session_log_counts' | 'session_log_day_counts', object>) =>
    Number((await kept.select(sql<string | number | null>`sum(n)`.as('n')).executeTakeFirstOrThrow()).n ?? 0)
  if (!startedSince) return sumKept(scoped('session_log_counts'))
  const wholeDays = startOfNextUtcDay(startedSince)
  const [keptDays, partialDay] = await Promise.all([
    sumKept(scoped('session_log_day_counts').where(sql<boolean>`day >= ${wholeDays.toISOString().slice(0, 10)}::date`)),
    wholeDays > startedSince ? countRows(matching.where('started_at', '<', wholeDays)) : 0,
  ])
  return keptDays + partialDay
}

/** Running sessions whose inactivity expiry has passed, for the sweeper. */
export async function findExpiredSessions(db: DbOrTrx, now: Date, limit: number): Promise<string[]> {
  const expired = (table: LogTable) => db.selectFrom(table).select('id').where('status', '=', 'running').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()
  const [sessions, previews] = await Promise.all([expired('session_logs'), expired('preview_session_logs')])
  return [...sessions, ...previews].slice(0, limit).map((row) => row.id)
}
