import type { Timestamp } from './columns.js'

export interface SessionLogsTable {
  id: string
  workspace_id: string
  organization_id: string
  flow_id: string
  flow_version: number
  external_id: string | null
  status: string
  warnings: number
  started_at: Timestamp
  expires_at: Timestamp
  finished_at: Timestamp | null
}
