import type { Timestamp } from './columns.js'

export interface OrganizationsTable {
  id: string
  name: string
  created_at: Timestamp
}
