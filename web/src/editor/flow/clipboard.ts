import { uniqueId, type FlowEdge, type FlowNode, type Graph } from './model'
import { inside, nodeBounds, type Box, type Point } from './placement'

/** Copied nodes and the edges between them, as they were when copied. */
export interface Clip {
  nodes: FlowNode[]
  edges: FlowEdge[]
}

/** The selected nodes (never the start: a flow has exactly one) and the edges among them; none selected is nothing. */
export function copySelection(graph: Graph): Clip | undefined {
  const nodes = graph.nodes.filter((n) => n.selected && n.type !== 'start')
  if (nodes.length === 0) return undefined
  const ids = new Set(nodes.map((n) => n.id))
  return {
    nodes: nodes.map((n) => ({ id: n.id, type: n.type, position: { ...n.position }, data: structuredClone(n.data) })),
    edges: graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((e) => ({ ...e })),
  }
}

// Each paste of the same copy lands this much further down and to the right.
const PASTE_STEP = 40

/**
 * How far the `times`-th paste of `clip` moves its nodes: a step further each time while that
 * stays in `view` (the visible canvas), else into the middle of the view.
 */
export function pasteOffset(clip: Clip, times: number, view: Box | undefined): Point {
  const step = { x: PASTE_STEP * times, y: PASTE_STEP * times }
  const box = nodeBounds(clip.nodes)
  const moved = { ...box, x: box.x + step.x, y: box.y + step.y }
  if (!view || inside(moved, view)) return step
  return { x: Math.round(view.x + view.width / 2 - box.width / 2 - box.x), y: Math.round(view.y + view.height / 2 - box.height / 2 - box.y) }
}

/** `clip` added to `graph` with new node and edge ids, moved by `offset`, and selected instead of what was. */
export function pasteClip(graph: Graph, clip: Clip, offset: Point): Graph {
  const nodeIds = new Set(graph.nodes.map((n) => n.id))
  const edgeIds = new Set(graph.edges.map((e) => e.id))
  const renamed = new Map<string, string>()
  const nodes = clip.nodes.map((node): FlowNode => {
    const id = uniqueId(node.type ?? 'node', nodeIds)
    nodeIds.add(id)
    renamed.set(node.id, id)
    return { id, type: node.type, position: { x: node.position.x + offset.x, y: node.position.y + offset.y }, data: structuredClone(node.data), selected: true, deletable: true }
  })
  const edges = clip.edges.map((edge): FlowEdge => {
    const id = uniqueId('e', edgeIds)
    edgeIds.add(id)
    return { id, source: renamed.get(edge.source) ?? edge.source, sourceHandle: edge.sourceHandle ?? null, target: renamed.get(edge.target) ?? edge.target }
  })
  return {
    nodes: [...graph.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), ...nodes],
    edges: [...graph.edges.map((e) => (e.selected ? { ...e, selected: false } : e)), ...edges],
  }
}

export const selectAll = (graph: Graph): Graph => ({
  nodes: graph.nodes.map((n) => (n.selected ? n : { ...n, selected: true })),
  edges: graph.edges.map((e) => (e.selected ? e : { ...e, selected: true })),
})
