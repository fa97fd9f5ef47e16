import type { Timestamp } from './columns.js'

export interface DashboardSessionsTable {
  id: string
  token_hash: string
  api_key_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  ended_at: Timestamp | null
}
