import type { Timestamp } from './columns.js'

/** Embedded-editor credentials (migration 0011); tokens only as SHA-256 hex. */
export interface EditorOneTimeTokensTable {
  token_hash: string
  client_id: string
  organization_id: string
  workspace_id: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}
