import type { Timestamp } from './columns.js'

/** Each node a session reached, once per session. */
export interface AnalyticsSessionNodesTable {
  session_id: string
  node_id: string
  flow_id: string
  flow_version: number
  workspace_id: string
  session_started_at: Timestamp
  first_reached_at: Timestamp
  visits: number
  answered_at: Timestamp | null
  /** The branches the session's visits to this node (a split) drew, each once (migration 0033). */
  branches: string[]
}
