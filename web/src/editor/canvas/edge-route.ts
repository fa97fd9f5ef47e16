import type { Box, Point } from '../flow/placement'

/** A node as the router avoids it. */
export interface Obstacle extends Box {
  id: string
}

// The lines an edge may take run this far from the nodes' sides, and no edge passes nearer than
// half of it; an edge leaves and enters a node straight for STUB px.
const CLEARANCE = 16
const STUB = 20
// A bend costs as much as this much more length: fewer bends read better than the shortest line.
const BEND = 40
// Of the vertical lines left and right of the edge's ends, the few nearest are tried.
const NEAREST = 4

const between = (value: number, low: number, high: number) => value > low && value < high

/** Whether the horizontal or vertical segment from `a` to `b` crosses `box`'s inside. */
function crosses(a: Point, b: Point, box: Box): boolean {
  const [left, right] = [Math.min(a.x, b.x), Math.max(a.x, b.x)]
  const [top, bottom] = [Math.min(a.y, b.y), Math.max(a.y, b.y)]
  if (a.y === b.y) return between(a.y, box.y, box.y + box.height) && right > box.x && left < box.x + box.width
  return between(a.x, box.x, box.x + box.width) && bottom > box.y && top < box.y + box.height
}

const length = (points: readonly Point[]) => points.slice(1).reduce((sum, p, i) => sum + Math.abs(p.x - points[i]!.x) + Math.abs(p.y - points[i]!.y), 0)

/** The route without repeated points and without corners that are no corners (three points in a line). */
function simplified(points: readonly Point[]): Point[] {
  const out: Point[] = []
  for (const point of points) {
    const last = out.at(-1)
    if (last && last.x === point.x && last.y === point.y) continue
    const before = out.at(-2)
    if (before && last && ((before.x === last.x && last.x === point.x) || (before.y === last.y && last.y === point.y))) out.pop()
    out.push(point)
  }
  return out
}

/**
 * An edge's way from `source` (an exit, on the right of its node) to `target` (an entry, on the
 * left of its node) in horizontal and vertical segments that pass no node: the source's and the
 * target's own boxes are avoided as they are, every other box with a clearance. Of the routes with
 * one vertical segment, or failing that three, the one with the least length and bends; undefined
 * when none is free (the canvas then draws its usual step line).
 */
export function routeEdge(source: Point, target: Point, nodes: readonly Obstacle[], sourceId: string, targetId: string): Point[] | undefined {
  const boxes = nodes.map((node) =>
    node.id === sourceId || node.id === targetId
      ? node
      : { x: node.x - CLEARANCE / 2, y: node.y - CLEARANCE / 2, width: node.width + CLEARANCE, height: node.height + CLEARANCE },
  )
  const free = (points: readonly Point[]) => points.every((p, i) => i === 0 || !boxes.some((box) => crosses(points[i - 1]!, p, box)))
  const cost = (points: Point[]) => length(points) + BEND * (simplified(points).length - 2)

  const middle = (source.x + target.x) / 2
  const verticals = [...new Set([middle, source.x + STUB, target.x - STUB, ...nodes.flatMap((n) => [n.x - CLEARANCE, n.x + n.width + CLEARANCE])])]
  const forward = verticals.filter((x) => x >= source.x + STUB && x <= target.x - STUB)
  // Of equal routes, the one bending nearest the middle, as a step line does.
  const oneBend = forward
    .map((x) => [source, { x, y: source.y }, { x, y: target.y }, target])
    .sort((a, b) => cost(a) - cost(b) || Math.abs(a[1]!.x - middle) - Math.abs(b[1]!.x - middle))
    .find(free)
  if (oneBend) return simplified(oneBend)

  const nearest = (xs: number[], from: number) => xs.sort((a, b) => Math.abs(a - from) - Math.abs(b - from)).slice(0, NEAREST)
  const out = nearest(verticals.filter((x) => x >= source.x + STUB), source.x)
  const into = nearest(verticals.filter((x) => x <= target.x - STUB), target.x)
  const rows = [...new Set([source.y, target.y, ...nodes.flatMap((n) => [n.y - CLEARANCE, n.y + n.height + CLEARANCE])])]
  const threeBends = out
    .flatMap((x1) => into.flatMap((x2) => rows.map((y) => [source, { x: x1, y: source.y }, { x: x1, y }, { x: x2, y }, { x: x2, y: target.y }, target])))
    .sort((a, b) => cost(a) - cost(b))
    .find(free)
  return threeBends && simplified(threeBends)
}
