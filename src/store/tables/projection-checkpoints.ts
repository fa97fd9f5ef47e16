import type { Generated } from 'kysely'
import type { Int8, Timestamp } from './columns.js'

export interface ProjectionCheckpointsTable {
  projection: string
  position_commit: Int8
  position_prepare: Int8
  updated_at: Generated<Timestamp>
}
