import type { ColumnType } from 'kysely'
import type { Field, Stage } from '../../domain/pipeline.js'
import type { Timestamp } from './columns.js'

export interface KanbanPipelinesTable {
  id: string
  workspace_id: string
  name: string
  stages: ColumnType<Stage[], string, string>
  fields: ColumnType<Field[], string, string>
  created_at: Timestamp
  updated_at: Timestamp
}
