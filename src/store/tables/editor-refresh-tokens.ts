import type { Timestamp } from './columns.js'

export interface EditorRefreshTokensTable {
  token_hash: string
  family_id: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}
