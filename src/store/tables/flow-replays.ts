import type { Timestamp } from './columns.js'

/** A replay of a flow's sessions against its draft (migration 0037). */
export interface FlowReplaysTable {
  replay_id: string
  flow_id: string
  workspace_id: string
  organization_id: string
  version: number
  draft_version: number
  status: 'running' | 'finished'
  total: number
  checked: number
  differing: number
  requested_at: Timestamp
  finished_at: Timestamp | null
}
