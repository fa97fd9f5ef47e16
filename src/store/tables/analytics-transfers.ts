import type { ColumnType } from 'kysely'
import type { Timestamp } from './columns.js'

/** Each transfer a turn asked for. */
export interface AnalyticsTransfersTable {
  session_id: string
  timestamp_micros: ColumnType<string, string | number | bigint, never>
  target_type: string
  target_id: string
  node_id: string | null
  transferred_at: Timestamp
}
