import type { ColumnType } from 'kysely'

/** As `kanban_card_counts`: the sum of each field's number values. */
export interface KanbanCardSumsTable {
  pipeline_id: string
  stage_id: string
  tag: string
  field_id: string
  total: ColumnType<string | number, never, never>
}
