import type { ColumnType } from 'kysely'
import type { Timestamp } from './columns.js'

/** Each stay of a card in a stage. */
export interface AnalyticsCardStaysTable {
  card_id: string
  entered_revision: ColumnType<string, string | number | bigint, never>
  pipeline_id: string
  workspace_id: string
  stage_id: string
  entered_at: Timestamp
  left_at: Timestamp | null
  left_by: string | null
}
