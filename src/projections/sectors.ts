import type { SectorEvent } from '../domain/sector.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'

export const sectorsProjection = defineProjection<SectorEvent>({
  name: 'sectors',
  streamPrefixes: ['sector-'],
  tables: ['sectors'],
  async apply(trx, event) {
    switch (event.type) {
      case 'SectorCreated':
        await trx
          .insertInto('sectors')
          .values({
            id: event.data.sectorId,
            workspace_id: event.data.workspaceId,
            organization_id: event.data.organizationId,
            name: event.data.name,
            created_at: event.data.createdAt,
            updated_at: event.data.createdAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      case 'SectorRenamed':
        await trx.updateTable('sectors').set({ name: event.data.name, updated_at: event.data.renamedAt }).where('id', '=', event.data.sectorId).execute()
        break
      case 'SectorDeleted':
        await trx.deleteFrom('sectors').where('id', '=', event.data.sectorId).execute()
        break
    }
  },
})

export interface SectorItem {
  id: string
  name: string
  createdAt: string
  updatedAt: string
}

const toItem = (row: { id: string; name: string; created_at: Date; updated_at: Date }): SectorItem => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
})

/** Sectors of one workspace, oldest first. */
export async function listSectors(db: DbOrTrx, query: Paging & { workspaceId: string }) {
  const matching = db.selectFrom('sectors').where('workspace_id', '=', query.workspaceId)
  const ordered = matching.select(['id', 'name', 'created_at', 'updated_at']).orderBy('created_at').orderBy('id')
  return listPage({ matching, ordered }, query, toItem)
}

export async function findSector(db: DbOrTrx, query: { workspaceId: string; id: string }): Promise<SectorItem | undefined> {
  const row = await db
    .selectFrom('sectors')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('id', '=', query.id)
    .where('workspace_id', '=', query.workspaceId)
    .executeTakeFirst()
  return row && toItem(row)
}
