import type { Pipeline } from '../api'
import type { Graph } from './model'
import { asFieldValue, type KanbanMoveData } from '../flow-definition'

/**
 * The graph with each kanbanMove value that was saved as text for a number or boolean field
 * converted where it reads as one; the rest stay as they are, for the form to flag.
 */
export function typedKanbanValues(graph: Graph, pipelines: readonly Pipeline[]): Graph {
  const nodes = graph.nodes.map((node) => {
    if (node.type !== 'kanbanMove') return node
    const data = node.data as Partial<KanbanMoveData>
    const fields = pipelines.find((p) => p.id === data.pipelineId)?.fields ?? []
    if (!data.values) return node
    let values = data.values
    for (const field of fields) {
      const value = values[field.id]
      if (value === undefined) continue
      const typed = asFieldValue(field.type, value)
      if (typed !== undefined && typed !== value) values = { ...values, [field.id]: typed }
    }
    return values === data.values ? node : { ...node, data: { ...node.data, values } }
  })
  return nodes.every((node, i) => node === graph.nodes[i]) ? graph : { ...graph, nodes }
}
