import { applyEdgeChanges, applyNodeChanges, type EdgeChange, type NodeChange } from '@xyflow/react'
import type { Pipeline, Sector } from '../api'
import type { NodeType } from '../flow-definition'
import { nodeUis } from '../nodes'
import type { NewNodeDefaults } from '../nodes/node-ui'
import { connect, disconnect, pruneEdges, uniqueId, type FlowNode, type Graph } from './model'
import type { Point } from './placement'

// What a person does to the graph, each a new graph; useFlowGraph.ts records them for undo.

/** The canvas's changes to the nodes applied; an edge whose node or exit is gone goes with it. */
export const applyCanvasNodeChanges = (graph: Graph, changes: NodeChange<FlowNode>[]): Graph =>
  pruneEdges({ ...graph, nodes: applyNodeChanges(changes, graph.nodes) })

export const applyCanvasEdgeChanges = (graph: Graph, changes: EdgeChange[]): Graph => ({ ...graph, edges: applyEdgeChanges(changes, graph.edges) })

/** Whether the canvas's changes edit the flow (undo takes them back) rather than select, measure or drag. */
export const nodeChangesEdit = (changes: readonly NodeChange[]) => changes.some((c) => c.type === 'remove' || c.type === 'add' || c.type === 'replace')
export const edgeChangesEdit = (changes: readonly EdgeChange[]) => changes.some((c) => c.type === 'remove')

/** The workspace's first sector, its first pipeline and that pipeline's first stage. */
export function newNodeDefaults(sectors: readonly Sector[], pipelines: readonly Pipeline[]): NewNodeDefaults {
  const pipeline = pipelines[0]
  const stage = pipeline ? [...pipeline.stages].sort((a, b) => a.order - b.order)[0] : undefined
  return { sectorId: sectors[0]?.id, pipelineId: pipeline?.id, stageId: stage?.id }
}

/** A new node of `type` at `position`, selected alone; the start node is never deletable. */
export function addNode(graph: Graph, type: NodeType, position: Point, defaults: NewNodeDefaults): Graph {
  const id = uniqueId(type, new Set(graph.nodes.map((n) => n.id)))
  const node: FlowNode = { id, type, position, data: nodeUis[type].newData(defaults), selected: true, deletable: type !== 'start' }
  return { ...graph, nodes: [...graph.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node] }
}

/** The nodes `positions` names moved there, the others left where they are. */
export const moveNodes = (graph: Graph, positions: ReadonlyMap<string, Point>): Graph => ({
  ...graph,
  nodes: graph.nodes.map((n) => {
    const to = positions.get(n.id)
    return to && (to.x !== n.position.x || to.y !== n.position.y) ? { ...n, position: { x: to.x, y: to.y } } : n
  }),
})

export const selectOnly = (graph: Graph, id: string): Graph => ({ ...graph, nodes: graph.nodes.map((n) => ({ ...n, selected: n.id === id })) })

/** The node's data replaced; the edges of exits it no longer has go. */
export const setNodeData = (graph: Graph, id: string, data: Record<string, unknown>): Graph =>
  pruneEdges({ ...graph, nodes: graph.nodes.map((n) => (n.id === id ? { ...n, data } : n)) })

/** The node and its edges removed; the start node stays (a flow has exactly one). */
export const deleteNode = (graph: Graph, id: string): Graph => pruneEdges({ ...graph, nodes: graph.nodes.filter((n) => n.id !== id || n.type === 'start') })

/** The exit connected to `target`, or left unconnected (the session ends there) when `target` is null. */
export const linkExit = (graph: Graph, id: string, exit: string | null, target: string | null): Graph =>
  target === null ? disconnect(graph, id, exit) : connect(graph, id, exit, target)
