import type { Edge, Node } from '@xyflow/react'
import { nodeUiOf } from '../nodes'
import type { Exit, FlowDefinition, FlowSettings, Problem } from '../flow-definition'

export type FlowNode = Node<Record<string, unknown>>
export type FlowEdge = Edge

export interface Graph {
  nodes: FlowNode[]
  edges: FlowEdge[]
}

export function toGraph(definition: FlowDefinition): Graph {
  return {
    nodes: definition.nodes.map((node) => ({
      id: node.id,
      type: node.type,
      position: { x: node.position.x, y: node.position.y },
      data: node.data ?? {},
      // The flow needs exactly one start.
      deletable: node.type !== 'start',
    })),
    edges: definition.edges.map((edge) => ({ id: edge.id, source: edge.source, target: edge.target, sourceHandle: edge.sourceHandle ?? null })),
  }
}

/** The document to save: the graph in the format's terms, and whatever else `base` holds untouched. */
export function toDefinition(base: FlowDefinition, graph: Graph): FlowDefinition {
  return {
    ...base,
    schemaVersion: 1,
    nodes: graph.nodes.map((node) => ({
      id: node.id,
      type: node.type ?? 'message',
      position: { x: Math.round(node.position.x), y: Math.round(node.position.y) },
      data: node.data,
    })),
    edges: graph.edges.map((edge) => {
      const out: FlowDefinition['edges'][number] = { id: edge.id, source: edge.source, target: edge.target }
      if (edge.sourceHandle) out.sourceHandle = edge.sourceHandle
      return out
    }),
  }
}

/** The document with setting `name` set to `value`, or taken out when undefined (and `settings` with it once empty); the others stay as they are. */
export function withSetting<Name extends keyof FlowSettings & string>(definition: FlowDefinition, name: Name, value: FlowSettings[Name] | undefined): FlowDefinition {
  const settings: FlowSettings = { ...definition.settings, [name]: value }
  if (value === undefined) delete settings[name]
  const changed: FlowDefinition = { ...definition, settings }
  if (Object.keys(settings).length === 0) delete changed.settings
  return changed
}

export const hasEntry = (type: string | undefined) => type !== 'start'

/** The exits of a node, in the order the canvas shows them (docs/flow-definition.md, "handles"); a type the editor does not know keeps one unnamed exit. */
export function exitsOf(type: string | undefined, data: Record<string, unknown>): readonly Exit[] {
  return nodeUiOf(type)?.exits(data) ?? [{ id: null }]
}

/** Drops the edges that leave by an exit their source no longer has, or touch a node that is gone. */
export function pruneEdges(graph: Graph): Graph {
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]))
  const edges = graph.edges.filter((edge) => {
    const source = nodes.get(edge.source)
    const target = nodes.get(edge.target)
    if (!source || !target || !hasEntry(target.type)) return false
    const handle = edge.sourceHandle ?? null
    return exitsOf(source.type, source.data).some((exit) => exit.id === handle)
  })
  return edges.length === graph.edges.length ? graph : { ...graph, edges }
}

/** Follows a renamed exit (a button, row or rule id) with the edge that left by it. */
export function renameExit(graph: Graph, nodeId: string, from: string, to: string): Graph {
  return {
    ...graph,
    edges: graph.edges.map((edge) => (edge.source === nodeId && edge.sourceHandle === from ? { ...edge, sourceHandle: to } : edge)),
  }
}

/** Connects an exit to a node; an exit has one edge at most, so an older one is replaced. */
export function connect(graph: Graph, source: string, sourceHandle: string | null, target: string): Graph {
  const kept = disconnect(graph, source, sourceHandle).edges
  return { ...graph, edges: [...kept, { id: uniqueId('e', new Set(graph.edges.map((e) => e.id))), source, sourceHandle, target }] }
}

/** Takes the edge off an exit: the session ends there. */
export function disconnect(graph: Graph, source: string, sourceHandle: string | null): Graph {
  const edges = graph.edges.filter((edge) => !(edge.source === source && (edge.sourceHandle ?? null) === sourceHandle))
  return edges.length === graph.edges.length ? graph : { ...graph, edges }
}

export function uniqueId(prefix: string, taken: ReadonlySet<string>): string {
  for (;;) {
    const id = `${prefix}_${Math.random().toString(36).slice(2, 8)}`
    if (!taken.has(id)) return id
  }
}

/** Problems of a validated definition, by node id and by edge id; the rest (document-wide) apart. */
export interface ProblemIndex {
  byNode: Map<string, Problem[]>
  byEdge: Map<string, Problem[]>
  all: { problem: Problem; nodeId?: string; edgeId?: string }[]
}

const NODE_PATH = /^nodes\[(\d+)\]/
const EDGE_PATH = /^edges\[(\d+)\]/

/** Finds the node or edge each problem's path (`nodes[1].data.saveAs`) points into, in `definition`. */
export function indexProblems(definition: FlowDefinition, problems: Problem[]): ProblemIndex {
  const index: ProblemIndex = { byNode: new Map(), byEdge: new Map(), all: [] }
  for (const problem of problems) {
    const node = NODE_PATH.exec(problem.path)
    const edge = EDGE_PATH.exec(problem.path)
    const nodeId = node ? definition.nodes[Number(node[1])]?.id : undefined
    const edgeId = edge ? definition.edges[Number(edge[1])]?.id : undefined
    if (nodeId !== undefined) index.byNode.set(nodeId, [...(index.byNode.get(nodeId) ?? []), problem])
    if (edgeId !== undefined) index.byEdge.set(edgeId, [...(index.byEdge.get(edgeId) ?? []), problem])
    index.all.push({ problem, nodeId, edgeId })
  }
  return index
}

export const emptyProblems = (): ProblemIndex => ({ byNode: new Map(), byEdge: new Map(), all: [] })

/** The path below the node (`data.prompt.text.body`), for showing a problem inside its node. */
export const pathInNode = (path: string) => path.replace(NODE_PATH, '').replace(/^\./, '')
