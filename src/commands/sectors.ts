import { sector, sectorStream } from '../domain/sector.js'
import { newId } from '../ids.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'

/** Where a command acts: the caller's workspace and organization. */
export interface Scope {
  workspaceId: string
  organizationId: string
}

export async function createSector(ctx: CommandContext, scope: Scope, input: { name: string }): Promise<{ sectorId: string }> {
  const sectorId = newId()
  const result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
    type: 'CreateSector',
    data: { sectorId, workspaceId: scope.workspaceId, organizationId: scope.organizationId, name: input.name, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return { sectorId }
}

export async function renameSector(ctx: CommandContext, scope: Scope, sectorId: string, name: string | undefined): Promise<{ id: string; name: string }> {
  const result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
    type: 'RenameSector',
    data: { sectorId, workspaceId: scope.workspaceId, name, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  if (result.state.status === 'none') throw new Error(`sector ${sectorId} vanished after its command`)
  return { id: sectorId, name: result.state.name }
}

export async function deleteSector(ctx: CommandContext, scope: Scope, sectorId: string): Promise<void> {
  const result = await handleCommand(ctx.store, sector, sectorStream(sectorId), {
    type: 'DeleteSector',
    data: { sectorId, workspaceId: scope.workspaceId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}
