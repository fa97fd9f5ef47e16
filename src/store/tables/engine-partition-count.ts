import type { Generated } from 'kysely'
import type { Timestamp } from './columns.js'

/** One row: the partition count the engine's checkpoints are made for (src/engine/partitions.ts). */
export interface EnginePartitionCountTable {
  only_row: Generated<boolean>
  partitions: number
  recorded_at: Generated<Timestamp>
}
