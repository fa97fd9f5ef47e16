import { startToEnd, type FlowDefinition } from '../domain/flow-definition.js'
import { flow, flowStream } from '../domain/flow.js'
import { newId } from '../ids.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'
import type { Scope } from './sectors.js'

export async function createFlow(ctx: CommandContext, scope: Scope, input: { name: string; definition?: FlowDefinition }): Promise<{ flowId: string }> {
  const flowId = newId()
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), {
    type: 'CreateFlow',
    data: { flowId, ...scope, name: input.name, definition: input.definition ?? startToEnd(), now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return { flowId }
}
