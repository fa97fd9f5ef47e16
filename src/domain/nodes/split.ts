import { Type, type Static } from '@sinclair/typebox'
import { checkHandleIds } from './checks.js'
import type { CheckContext, Exit, NodeOf, Step, Visit } from './node-type.js'

export const BRANCHES = { min: 2, max: 5 } as const
export const WEIGHT = { min: 1, max: 100 } as const

/**
 * An A/B test: each visit leaves by one of its branches, drawn with the chance of its weight over
 * the sum of the weights. The turn records the branch drawn, and a replay of the turn takes it
 * instead of drawing again (docs/flow-definition.md, `split`).
 */
export const schema = Type.Object({
  branches: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1 }),
      weight: Type.Integer({ minimum: WEIGHT.min, maximum: WEIGHT.max }),
    }),
    { minItems: BRANCHES.min, maxItems: BRANCHES.max },
  ),
})
export type Data = Static<typeof schema>
export type Branch = Data['branches'][number]

export const exits = (data: Partial<Data>): Exit[] => (data.branches ?? []).map((branch) => ({ id: branch.id, label: branch.id }))

export const check = ({ branches }: Data, context: CheckContext): void => {
  checkHandleIds(branches.map((branch, i) => ({ id: branch.id, at: ['branches', i, 'id'] })), context)
}

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => ({ exit: visit.choose(node.data.branches) })
