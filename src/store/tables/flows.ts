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
  /** The version new sessions start on, but for the share of `gradual_version`. */
  live_version: number
  gradual_version: number | null
  gradual_percent: number | null
  created_at: Timestamp
  updated_at: Timestamp
}
