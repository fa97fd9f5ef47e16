import { Graph, layout } from '@dagrejs/dagre'
import type { Point } from './route-path'

export { routePath } from './route-path'
export type { Point }

/** A node to place: its size as drawn. */
export interface LayoutNode {
  id: string
  width: number
  height: number
}

export interface LayoutEdge {
  id: string
  source: string
  target: string
}

export interface FlowLayout {
  /** Each node's top-left corner. */
  positions: Map<string, Point>
  /** Each edge's route, from its source's side to its target's, bent around the nodes between them. */
  routes: Map<string, Point[]>
  width: number
  height: number
}

export interface LayoutOptions {
  /** Left to right (the editor's and the drop-off drawing's reading order) or top to bottom. */
  direction?: 'LR' | 'TB'
  /** Space between nodes of one column (or row, top to bottom). */
  nodeGap?: number
  /** Space between the columns. */
  rankGap?: number
}

/**
 * A flow laid out in columns by its edges (dagre's layered layout): the start on the left, each
 * step right of the one before, few crossings, and edges routed between the nodes rather than
 * through them. The editor's "Arrange" and the analytics drop-off drawing share it, so a flow
 * reads the same in both.
 */
export function layOutFlow(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], options: LayoutOptions = {}): FlowLayout {
  const graph = new Graph({ multigraph: true })
  graph.setGraph({ rankdir: options.direction ?? 'LR', nodesep: options.nodeGap ?? 40, ranksep: options.rankGap ?? 90, edgesep: 20, marginx: 0, marginy: 0 })
  graph.setDefaultEdgeLabel(() => ({}))
  const known = new Set(nodes.map((node) => node.id))
  for (const node of nodes) graph.setNode(node.id, { width: node.width, height: node.height })
  for (const edge of edges) if (known.has(edge.source) && known.has(edge.target)) graph.setEdge(edge.source, edge.target, {}, edge.id)
  layout(graph)

  const positions = new Map<string, Point>()
  for (const node of nodes) {
    const placed = graph.node(node.id)
    positions.set(node.id, { x: placed.x - node.width / 2, y: placed.y - node.height / 2 })
  }
  const routes = new Map<string, Point[]>()
  for (const edge of edges) {
    if (!known.has(edge.source) || !known.has(edge.target)) continue
    routes.set(edge.id, graph.edge({ v: edge.source, w: edge.target, name: edge.id })?.points ?? [])
  }
  // Edges going back (loops) bend outside the nodes' box: the drawing's origin is its top-left corner, whatever lies there.
  const sized = new Map(nodes.map((node) => [node.id, node]))
  const corners = [...positions].flatMap(([id, p]) => [p, { x: p.x + sized.get(id)!.width, y: p.y + sized.get(id)!.height }])
  const all = [...corners, ...[...routes.values()].flat()]
  const left = Math.min(0, ...all.map((p) => p.x))
  const top = Math.min(0, ...all.map((p) => p.y))
  const shift = (p: Point): Point => ({ x: Math.round(p.x - left), y: Math.round(p.y - top) })
  return {
    positions: new Map([...positions].map(([id, p]) => [id, shift(p)])),
    routes: new Map([...routes].map(([id, points]) => [id, points.map(shift)])),
    width: Math.ceil(Math.max(0, ...all.map((p) => p.x)) - left),
    height: Math.ceil(Math.max(0, ...all.map((p) => p.y)) - top),
  }
}
