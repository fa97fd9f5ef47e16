import type { ColumnType } from 'kysely'
import type { CardValues } from '../../domain/card.js'
import type { Timestamp } from './columns.js'

export interface KanbanCardsTable {
  id: string
  pipeline_id: string
  workspace_id: string
  stage_id: string
  session_id: string | null
  tags: string[]
  field_values: ColumnType<CardValues, string, string>
  /** Generated from `field_values`; what `q` searches. */
  search_text: ColumnType<string, never, never>
  created_at: Timestamp
  moved_at: Timestamp
}
