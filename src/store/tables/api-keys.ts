import type { Selectable } from 'kysely'
import type { Timestamp } from './columns.js'

export interface ApiKeysTable {
  id: string
  organization_id: string
  workspace_id: string
  name: string
  role: string
  key_hash: string
  key_prefix: string
  callback_url: string | null
  signing_secret: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export type ApiKeyRow = Selectable<ApiKeysTable>
