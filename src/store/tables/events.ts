import type { ColumnType } from 'kysely'
import type { Int8 } from './columns.js'

export interface EventsTable {
  global_position: ColumnType<string | number, never, never>
  transaction_id: ColumnType<string | number, never, never>
  event_id: string
  stream_id: string
  stream_revision: Int8
  event_type: string
  data: ColumnType<unknown, string, string>
  metadata: ColumnType<Record<string, unknown>, string, string>
  created_at: ColumnType<Date, never, never>
}
