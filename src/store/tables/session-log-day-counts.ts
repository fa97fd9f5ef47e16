import type { ColumnType } from 'kysely'

/** As `session_log_counts`, per UTC day of `started_at`. */
export interface SessionLogDayCountsTable {
  organization_id: string
  day: ColumnType<Date, never, never>
  workspace_id: string
  status: string
  n: ColumnType<string | number, never, never>
}
