import type { Timestamp } from './columns.js'

export interface SectorsTable {
  id: string
  workspace_id: string
  organization_id: string
  name: string
  created_at: Timestamp
  updated_at: Timestamp
}
