import { variables, variablesStream, type VariableType, type WorkspaceVariable } from '../domain/variables.js'
import type { VariableValue } from '../domain/turn.js'
import { newId } from '../ids.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'
import type { Scope } from './sectors.js'

const recorded = (state: { byId: Readonly<Record<string, WorkspaceVariable>> }, variableId: string): WorkspaceVariable => {
  const found = state.byId[variableId]
  if (!found) throw new Error(`variable ${variableId} vanished after its command`)
  return found
}

export async function defineVariable(
  ctx: CommandContext,
  scope: Scope,
  input: { name: string; type: VariableType; description?: string; defaultValue?: VariableValue },
): Promise<WorkspaceVariable> {
  const variableId = newId()
  const result = await handleCommand(ctx.store, variables, variablesStream(scope.workspaceId), {
    type: 'DefineVariable',
    data: {
      workspaceId: scope.workspaceId,
      variableId,
      name: input.name,
      type: input.type,
      description: input.description ?? null,
      defaultValue: input.defaultValue ?? null,
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return recorded(result.state, variableId)
}

/** `null` clears the description or default; a missing field keeps it. */
export async function changeVariable(
  ctx: CommandContext,
  scope: Scope,
  variableId: string,
  input: { name?: string; type?: VariableType; description?: string | null; defaultValue?: VariableValue | null },
): Promise<WorkspaceVariable> {
  const result = await handleCommand(ctx.store, variables, variablesStream(scope.workspaceId), {
    type: 'ChangeVariable',
    data: { workspaceId: scope.workspaceId, variableId, ...input, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return recorded(result.state, variableId)
}

export async function removeVariable(ctx: CommandContext, scope: Scope, variableId: string): Promise<void> {
  const result = await handleCommand(ctx.store, variables, variablesStream(scope.workspaceId), {
    type: 'RemoveVariable',
    data: { workspaceId: scope.workspaceId, variableId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}
