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
      case 'WorkspaceChanged': {
        const { name, timezone } = event.data
        await trx
          .updateTable('workspaces')
          .set({ ...(name !== undefined ? { name } : {}), ...(timezone !== undefined ? { timezone } : {}) })
          .where('id', '=', event.data.workspaceId)
          .execute()
        break
      }
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

export interface WorkspaceRecord extends WorkspaceListItem {
  timezone: string | null
}

/** One workspace of an organization, with its time zone; undefined when the organization has no such workspace. */
export async function getWorkspace(db: DbOrTrx, organizationId: string, id: string): Promise<WorkspaceRecord | undefined> {
  const row = await db.selectFrom('workspaces').select(['id', 'name', 'timezone', 'created_at']).where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst()
  return row && { id: row.id, name: row.name, createdAt: new Date(row.created_at).toISOString(), timezone: row.timezone }
}

export async function findWorkspace(db: DbOrTrx, id: string) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
}
