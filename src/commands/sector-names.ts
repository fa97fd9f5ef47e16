import { sector, sectorNameKey, sectorStream } from '../domain/sector.js'
import { ConflictError } from '../errors.js'
import type { DbOrTrx } from '../store/database.js'
import type { CommandContext } from './context.js'
import { loadState } from './handle.js'

/** Sector commands reserve names in the read-model database. */
export interface SectorContext extends CommandContext {
  db: DbOrTrx
}

/**
 * A reservation younger than this whose sector does not carry the name yet belongs to a create or
 * rename under way; an older one was left by a command that failed midway and may be taken over.
 */
const UNDER_WAY_MS = 60_000

const MAX_ATTEMPTS = 5

/**
 * Reserves the name for the sector in the workspace: 'reserved' when this call took it (the caller
 * releases it if its command fails), 'held' when the sector had it already. The table's primary key
 * (workspace, name key) decides between concurrent callers; a name a live sector carries is a 409.
 */
export async function reserveSectorName(ctx: SectorContext, workspaceId: string, sectorId: string, name: string): Promise<'reserved' | 'held'> {
  const nameKey = sectorNameKey(name)
  const now = ctx.now()
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const inserted = await ctx.db
      .insertInto('sector_names')
      .values({ workspace_id: workspaceId, name_key: nameKey, sector_id: sectorId, reserved_at: now.toISOString() })
      .onConflict((oc) => oc.columns(['workspace_id', 'name_key']).doNothing())
      .returning('sector_id')
      .executeTakeFirst()
    if (inserted) return 'reserved'
    const holder = await ctx.db
      .selectFrom('sector_names')
      .select(['sector_id', 'reserved_at'])
      .where('workspace_id', '=', workspaceId)
      .where('name_key', '=', nameKey)
      .executeTakeFirst()
    if (!holder) continue
    if (holder.sector_id === sectorId) return 'held'
    const held = await loadState(ctx.store, sector, sectorStream(holder.sector_id))
    const carried = held.status === 'active' && sectorNameKey(held.name) === nameKey
    const underWay = now.getTime() - new Date(holder.reserved_at).getTime() < UNDER_WAY_MS
    if (carried || underWay) throw new ConflictError(`a sector named "${name.trim()}" already exists in this workspace`)
    const taken = await ctx.db
      .updateTable('sector_names')
      .set({ sector_id: sectorId, reserved_at: now.toISOString() })
      .where('workspace_id', '=', workspaceId)
      .where('name_key', '=', nameKey)
      .where('sector_id', '=', holder.sector_id)
      .executeTakeFirst()
    if (taken.numUpdatedRows > 0n) return 'reserved'
  }
  throw new ConflictError(`the sector name "${name.trim()}" is being claimed concurrently; try again`)
}

/** Frees the sector's names, all of them or all but `keep`. */
export async function releaseSectorNames(ctx: SectorContext, workspaceId: string, sectorId: string, keep?: string): Promise<void> {
  let query = ctx.db.deleteFrom('sector_names').where('workspace_id', '=', workspaceId).where('sector_id', '=', sectorId)
  if (keep !== undefined) query = query.where('name_key', '<>', sectorNameKey(keep))
  await query.execute()
}

/** Frees one name this sector reserved for a command that then failed. */
export async function releaseSectorName(ctx: SectorContext, workspaceId: string, sectorId: string, name: string): Promise<void> {
  await ctx.db.deleteFrom('sector_names').where('workspace_id', '=', workspaceId).where('sector_id', '=', sectorId).where('name_key', '=', sectorNameKey(name)).execute()
}
