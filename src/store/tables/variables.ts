import type { ColumnType } from 'kysely'
import type { Timestamp } from './columns.js'

export interface VariablesTable {
  id: string
  workspace_id: string
  name: string
  type: string
  description: string | null
  /** JSON of the default value; SQL null when there is none. */
  default_value: ColumnType<unknown, string | null, string | null>
  created_at: Timestamp
  updated_at: Timestamp
}
