import type { ColumnType } from 'kysely'
import type { Timestamp } from './columns.js'

export interface FlowVersionsTable {
  flow_id: string
  version: number
  definition: ColumnType<unknown, string, string>
  published_at: Timestamp
}
