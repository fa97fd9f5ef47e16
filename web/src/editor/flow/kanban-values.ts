import type { Pipeline } from '../api'
import type { Graph } from './model'
import { FIELD_VALUE_TYPES, type CardValue, type FieldType, type KanbanMoveData } from './types'

// Plain decimal notation only: "1,5" or "1.000" could mean either of two numbers, so they stay text.
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/**
 * `value` as the field's JSON type takes it: a number for a number or currency field, true or
 * false for a boolean one, as it is for the others. Text that reads as such a value ("12",
 * "true") is converted; undefined when it does not (the card would refuse it).
 */
export function asFieldValue(type: FieldType, value: CardValue): CardValue | undefined {
  const wanted = FIELD_VALUE_TYPES[type] ?? 'string'
  if (typeof value === wanted) return value
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (wanted === 'number') return DECIMAL.test(text) && Number.isFinite(Number(text)) ? Number(text) : undefined
  if (wanted === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined
  return undefined
}

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
