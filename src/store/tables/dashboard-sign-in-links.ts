import type { Timestamp } from './columns.js'

export interface DashboardSignInLinksTable {
  token_hash: string
  api_key_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}
