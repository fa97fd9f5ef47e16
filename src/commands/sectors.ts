import { sector, sectorStream } from '../domain/sector.js'
import { newId } from '../ids.js'
import { awaitReadModels } from './context.js'
import { handleCommand } from './handle.js'
import { releaseSectorName, releaseSectorNames, reserveSectorName, type SectorContext } from './sector-names.js'

export type { SectorContext } from './sector-names.js'

/** Where a command acts: the caller's workspace and organization. */
export interface Scope {
  workspaceId: string
  organizationId: string
}

/** A sector's name is reserved first: another live sector of the workspace with that name is a 409. */
export async function createSector(ctx: SectorContext, scope: Scope, input: { name: string }): Promise<{ sectorId: string }> {
  const sectorId = newId()
  await reserveSectorName(ctx, scope.workspaceId, sectorId, input.name)
  try {
    const result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
      type: 'CreateSector',
      data: { sectorId, workspaceId: scope.workspaceId, organizationId: scope.organizationId, name: input.name, now: ctx.now().toISOString() },
    }, ctx.metadata)
    await awaitReadModels(ctx, result)
  } catch (error) {
    await releaseSectorName(ctx, scope.workspaceId, sectorId, input.name)
    throw error
  }
  return { sectorId }
}

export async function renameSector(ctx: SectorContext, scope: Scope, sectorId: string, name: string | undefined): Promise<{ id: string; name: string }> {
  const reserved = name === undefined ? 'held' : await reserveSectorName(ctx, scope.workspaceId, sectorId, name)
  let result
  try {
    result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
      type: 'RenameSector',
      data: { sectorId, workspaceId: scope.workspaceId, name, now: ctx.now().toISOString() },
    }, ctx.metadata)
  } catch (error) {
    if (reserved === 'reserved' && name !== undefined) await releaseSectorName(ctx, scope.workspaceId, sectorId, name)
    throw error
  }
  if (result.state.status === 'none') throw new Error(`sector ${sectorId} vanished after its command`)
  await releaseSectorNames(ctx, scope.workspaceId, sectorId, result.state.name)
  await awaitReadModels(ctx, result)
  return { id: sectorId, name: result.state.name }
}

export async function deleteSector(ctx: SectorContext, scope: Scope, sectorId: string): Promise<void> {
  const result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
    type: 'DeleteSector',
    data: { sectorId, workspaceId: scope.workspaceId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await releaseSectorNames(ctx, scope.workspaceId, sectorId)
  await awaitReadModels(ctx, result)
}
