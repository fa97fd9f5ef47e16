import type { Timestamp } from './columns.js'

/** Analytics read models (migration 0015; docs/analytics.md): each session once, with the last node it reached. */
export interface AnalyticsSessionsTable {
  session_id: string
  organization_id: string
  workspace_id: string
  flow_id: string
  flow_version: number
  status: string
  started_at: Timestamp
  finished_at: Timestamp | null
  last_node_id: string | null
  turns: number
}
