import type { ColumnType } from 'kysely'

/** Kept by triggers of migration 0013 beside `kanban_cards`: cards per stage and tag ('' = every card). */
export interface KanbanCardCountsTable {
  pipeline_id: string
  stage_id: string
  tag: string
  n: ColumnType<string | number, never, never>
}
