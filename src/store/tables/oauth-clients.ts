import type { Timestamp } from './columns.js'

export interface OAuthClientsTable {
  id: string
  organization_id: string
  workspace_id: string
  name: string
  secret_hash: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}
