import type { WorkspaceEvent } from '../domain/workspace.js'
import type { DbOrTrx } from '../store/database.js'
import { countRows, onePage } from './list-filters.js'
import { defineProjection } from './projection.js'

export const workspacesProjection = defineProjection<WorkspaceEvent>({
  name: 'workspaces',
  streamPrefixes: ['workspace-'],
  tables: ['workspaces'],
  async apply(trx, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        await trx
          .insertInto('workspaces')
          .values({
            id: event.data.workspaceId,
            organization_id: event.data.organizationId,
            name: event.data.name,
            timezone: event.data.timezone,
            created_at: event.data.createdAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
    }
  },
})

export interface WorkspaceListItem {
  id: string
  name: string
  createdAt: string
}

/** Workspaces of one organization (or only one of its workspaces), oldest first. */
export async function listWorkspaces(
  db: DbOrTrx,
  query: { organizationId: string; onlyWorkspaceId?: string; page: number; size: number },
): Promise<{ content: WorkspaceListItem[]; totalElements: number }> {
  const base = db
    .selectFrom('workspaces')
    .where('organization_id', '=', query.organizationId)
    .$if(query.onlyWorkspaceId !== undefined, (qb) => qb.where('id', '=', query.onlyWorkspaceId!))
  const [rows, totalElements] = await Promise.all([
    base
      .select(['id', 'name', 'created_at'])
      .orderBy('created_at')
      .orderBy('id')
      .$call(onePage(query))
      .execute(),
    countRows(base),
  ])
  return {
    content: rows.map((row) => ({ id: row.id, name: row.name, createdAt: new Date(row.created_at).toISOString() })),
    totalElements,
  }
}

export async function findWorkspace(db: DbOrTrx, id: string) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
}
