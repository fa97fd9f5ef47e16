import type { Timestamp } from './columns.js'

export interface EditorTokenFamiliesTable {
  id: string
  client_id: string
  organization_id: string
  workspace_id: string
  created_at: Timestamp
  expires_at: Timestamp
  revoked_at: Timestamp | null
}
