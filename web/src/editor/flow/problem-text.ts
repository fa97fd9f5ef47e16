import { flowProblemText } from '../../shared/api-problems'
import type { Translate } from '../i18n'
import type { ProblemIndex } from './model'
import type { FlowDefinition, Problem } from '../flow-definition'

/** The problems with their messages written for a person (the path stays, for finding the node). */
export const forPeople = (definition: FlowDefinition, problems: readonly Problem[], t: Translate): Problem[] =>
  problems.map((problem) => ({ path: problem.path, message: flowProblemText(definition, problem, t) }))

/** The problems without those of one node: a node just edited no longer shows what was said of it before. */
export function withoutNode(index: ProblemIndex, nodeId: string): ProblemIndex {
  if (!index.byNode.has(nodeId)) return index
  const byNode = new Map(index.byNode)
  byNode.delete(nodeId)
  return { byNode, byEdge: index.byEdge, all: index.all.filter((entry) => entry.nodeId !== nodeId) }
}
