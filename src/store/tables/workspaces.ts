import type { Insertable, Selectable } from 'kysely'
import type { Timestamp } from './columns.js'

export interface WorkspacesTable {
  id: string
  organization_id: string
  name: string
  timezone: string | null
  created_at: Timestamp
}

export type Workspace = Selectable<WorkspacesTable>
export type NewWorkspace = Insertable<WorkspacesTable>
