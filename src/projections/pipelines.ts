import type { Field, PipelineEvent, Stage } from '../domain/pipeline.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'

export const pipelinesProjection = defineProjection<PipelineEvent>({
  name: 'kanban-pipelines',
  streamPrefixes: ['pipeline-'],
  tables: ['kanban_pipelines'],
  async apply(trx, event) {
    switch (event.type) {
      case 'PipelineCreated': {
        const d = event.data
        await trx
          .insertInto('kanban_pipelines')
          .values({
            id: d.pipelineId,
            workspace_id: d.workspaceId,
            name: d.name,
            stages: JSON.stringify(d.stages),
            fields: JSON.stringify(d.fields),
            created_at: d.createdAt,
            updated_at: d.createdAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      }
      case 'PipelineUpdated': {
        const d = event.data
        await trx
          .updateTable('kanban_pipelines')
          .set({ name: d.name, stages: JSON.stringify(d.stages), fields: JSON.stringify(d.fields), updated_at: d.updatedAt })
          .where('id', '=', d.pipelineId)
          .execute()
        break
      }
    }
  },
})

/** A pipeline as the API shows it (spec §2, Kanban pipeline). */
export interface PipelineRecord {
  id: string
  name: string
  workspaceId: string
  workspaceName: string
  defaultGroupBy: null
  columnAggregation: null
  fields: Field[]
  stages: Stage[]
  createdAt: string
  updatedAt: string
}

export const pipelineRecord = (
  pipeline: { id: string; workspaceId: string; name: string; stages: Stage[]; fields: Field[]; createdAt: string | Date; updatedAt: string | Date },
  workspaceName: string,
): PipelineRecord => ({
  id: pipeline.id,
  name: pipeline.name,
  workspaceId: pipeline.workspaceId,
  workspaceName,
  defaultGroupBy: null,
  columnAggregation: null,
  fields: pipeline.fields,
  stages: pipeline.stages,
  createdAt: new Date(pipeline.createdAt).toISOString(),
  updatedAt: new Date(pipeline.updatedAt).toISOString(),
})

const selectPipelines = (db: DbOrTrx, workspaceId: string) =>
  db
    .selectFrom('kanban_pipelines as p')
    .innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .where('p.workspace_id', '=', workspaceId)
    .select(['p.id', 'p.workspace_id', 'p.name', 'p.stages', 'p.fields', 'p.created_at', 'p.updated_at', 'w.name as workspace_name'])

type PipelineRow = Awaited<ReturnType<ReturnType<typeof selectPipelines>['executeTakeFirstOrThrow']>>

const fromRow = (row: PipelineRow): PipelineRecord =>
  pipelineRecord({ id: row.id, workspaceId: row.workspace_id, name: row.name, stages: row.stages, fields: row.fields, createdAt: row.created_at, updatedAt: row.updated_at }, row.workspace_name)

/** Pipelines of one workspace, oldest first. */
export async function listPipelines(db: DbOrTrx, query: Paging & { workspaceId: string }) {
  const matching = db.selectFrom('kanban_pipelines').where('workspace_id', '=', query.workspaceId)
  const ordered = selectPipelines(db, query.workspaceId).orderBy('p.created_at').orderBy('p.id')
  return listPage({ matching, ordered }, query, fromRow)
}

export async function findPipeline(db: DbOrTrx, query: { workspaceId: string; id: string }): Promise<PipelineRecord | undefined> {
  const row = await selectPipelines(db, query.workspaceId).where('p.id', '=', query.id).executeTakeFirst()
  return row && fromRow(row)
}
