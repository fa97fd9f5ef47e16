import type { WorkspaceEvent } from '../domain/workspace.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type ListPage, type Paging } from './paging.js'
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
  query: Paging & { organizationId: string; onlyWorkspaceId?: string },
): Promise<ListPage<WorkspaceListItem>> {
  const matching = db
    .selectFrom('workspaces')
    .where('organization_id', '=', query.organizationId)
    .$if(query.onlyWorkspaceId !== undefined, (qb) => qb.where('id', '=', query.onlyWorkspaceId!))
  const ordered = matching.select(['id', 'name', 'created_at']).orderBy('created_at').orderBy('id')
  return listPage({ matching, ordered }, query, (row) => ({ id: row.id, name: row.name, createdAt: new Date(row.created_at).toISOString() }))
}

export async function findWorkspace(db: DbOrTrx, id: string) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
}
