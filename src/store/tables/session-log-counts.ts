import type { ColumnType } from 'kysely'

/** Kept by triggers of migration 0013 beside `session_logs`: rows per workspace and status. */
export interface SessionLogCountsTable {
  organization_id: string
  workspace_id: string
  status: string
  n: ColumnType<string | number, never, never>
}
