import { Type, type Static } from '@sinclair/typebox'
import { NO_EXITS, type CheckContext, type NodeOf, type Step, type Visit } from './node-type.js'

export const TARGET_TYPES = ['sector', 'agent'] as const

/** Hands the conversation over to a sector or an agent, and completes the session. */
export const schema = Type.Object({ targetType: Type.Union(TARGET_TYPES.map((type) => Type.Literal(type))), targetId: Type.String({ format: 'uuid' }) })
export type Data = Static<typeof schema>

export const exits = () => NO_EXITS

export const check = ({ targetType, targetId }: Data, { catalog, report }: CheckContext): void => {
  if (targetType === 'sector' && !catalog.sectorIds.has(targetId)) report(['targetId'], `no sector "${targetId}" in this workspace`)
}

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.call({ type: 'transfer', targetType: node.data.targetType, targetId: node.data.targetId })
  return 'complete'
}
