import type { ColumnType } from 'kysely'
import type { Timestamp } from './columns.js'

export interface FlowsTable {
  id: string
  workspace_id: string
  organization_id: string
  name: string
  draft: ColumnType<unknown, string, string>
  draft_version: number
  published_version: number
  created_at: Timestamp
  updated_at: Timestamp
}
