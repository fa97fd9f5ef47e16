import { sql, type SelectQueryBuilder } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { DateRange } from './date-range.js'
import { countRows, dateRangeSince, onePage, toIso } from './list-filters.js'
import { defineProjection } from './projection.js'

/** The log's status words (spec §3) for the session's states. */
export type LogStatus = 'running' | 'completed' | 'timeout' | 'error'

export const sessionLogsProjection = defineProjection<SessionEvent>({
  name: 'session-logs',
  streamPrefixes: ['session-'],
  tables: ['session_logs'],
  async apply(trx, event) {
    switch (event.type) {
      case 'SessionStarted': {
        const d = event.data
        await trx
          .insertInto('session_logs')
          .values({
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
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      }
      case 'MessageReceived':
        await trx.updateTable('session_logs').set({ expires_at: event.data.expiresAt }).where('id', '=', event.data.sessionId).execute()
        break
      case 'TurnCompleted': {
        const { output, completedAt, sessionId } = event.data
        const finished = output.status !== 'active'
        await trx
          .updateTable('session_logs')
          .set({
            warnings: sql`warnings + ${output.warnings.length}`,
            ...(finished ? { status: output.status, finished_at: completedAt } : {}),
          })
          .where('id', '=', sessionId)
          .execute()
        break
      }
      case 'SessionExpired':
        await trx
          .updateTable('session_logs')
          .set({ status: 'timeout', finished_at: event.data.expiredAt })
          .where('id', '=', event.data.sessionId)
          .where('status', '=', 'running')
          .execute()
        break
    }
  },
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

export interface SessionLogQuery {
  organizationId: string
  page: number
  size: number
  orderBy?: SessionLogOrder
  direction: 'ASC' | 'DESC'
  workspaceId?: string
  sessionId?: string
  status?: LogStatus
  dateRange?: DateRange
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
 * otherwise fetches every skipped row from the table); and a page that is not full tells the total
 * itself, without counting.
 */
export async function listSessionLogs(db: DbOrTrx, query: SessionLogQuery): Promise<{ content: SessionLogEntry[]; totalElements: number }> {
  const startedSince = await dateRangeSince(db, query)
  let base = db.selectFrom('session_logs').where('organization_id', '=', query.organizationId)
  if (query.workspaceId) base = base.where('workspace_id', '=', query.workspaceId)
  if (query.sessionId) base = base.where('id', '=', query.sessionId)
  if (query.status) base = base.where('status', '=', query.status)
  if (startedSince) base = base.where('started_at', '>=', startedSince)
  const direction = query.direction === 'DESC' ? 'desc' : 'asc'
  const column = SESSION_LOG_ORDER_COLUMNS[query.orderBy ?? 'startedAt']
  const ordered = <O>(q: SelectQueryBuilder<Database, 'session_logs', O>) =>
    (NULLABLE_ORDER_COLUMNS.has(column)
      ? q.orderBy(column, (ob) => (direction === 'desc' ? ob.desc().nullsLast() : ob.asc().nullsLast()))
      : q.orderBy(column, direction)
    ).orderBy('id', direction)
  const rows =
    query.page === 0
      ? await ordered(base.selectAll()).$call(onePage(query)).execute()
      : await ordered(db.selectFrom('session_logs').selectAll().where('id', 'in', ordered(base.select('id')).$call(onePage(query)))).execute()
  const offset = query.page * query.size
  const totalElements = rows.length < query.size && (rows.length > 0 || query.page === 0) ? offset + rows.length : await countRows(base)
  return {
    content: rows.map((row) => ({
      id: row.id,
      workspaceId: row.workspace_id,
      flowId: row.flow_id,
      externalId: row.external_id,
      status: row.status as LogStatus,
      warnings: row.warnings,
      startedAt: toIso(row.started_at),
      expiresAt: toIso(row.expires_at),
      finishedAt: row.finished_at === null ? null : toIso(row.finished_at),
    })),
    totalElements,
  }
}

/** Running sessions whose inactivity expiry has passed, for the sweeper. */
export async function findExpiredSessions(db: DbOrTrx, now: Date, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('session_logs').select('id').where('status', '=', 'running').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()
  return rows.map((row) => row.id)
}
