import type { FlowNode } from './model'

export interface Point {
  x: number
  y: number
}

/** A rectangle in the flow's coordinates. */
export interface Box extends Point {
  width: number
  height: number
}

// The nodes' CSS width, and the height of a node that has not been measured yet.
export const NODE_SIZE = { width: 200, height: 110 }

const GAP = 20
const STEP = 40
/**
 * The room a new node takes: a new node is not connected yet, so the first check adds a problems
 * box under its body ("cannot be reached from the start"); room for it keeps it off its neighbours.
 */
const NEW_NODE_ROOM = { width: NODE_SIZE.width, height: NODE_SIZE.height + 80 }

const boxOf = (node: FlowNode): Box => ({
  x: node.position.x,
  y: node.position.y,
  width: node.measured?.width ?? NODE_SIZE.width,
  height: node.measured?.height ?? NODE_SIZE.height,
})

const overlaps = (a: Box, b: Box, gap = GAP) => a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap

/** The smallest box around `boxes`. */
export function bounds(boxes: Box[]): Box {
  const left = Math.min(...boxes.map((b) => b.x))
  const top = Math.min(...boxes.map((b) => b.y))
  const right = Math.max(...boxes.map((b) => b.x + b.width))
  const bottom = Math.max(...boxes.map((b) => b.y + b.height))
  return { x: left, y: top, width: right - left, height: bottom - top }
}

export const nodeBounds = (nodes: FlowNode[]): Box => bounds(nodes.map(boxOf))

/**
 * Where a new node goes in `view` (the visible part of the canvas): the free spot nearest the
 * view's centre, on a grid, clear of the nodes and of `covered` (what the minimap and the zoom
 * controls hide); when the view has none, its centre (nudged so it never lands exactly on another
 * node's corner).
 */
export function freeSpot(nodes: FlowNode[], view: Box, covered: readonly Box[] = []): Point {
  const taken = nodes.map(boxOf)
  const center = { x: view.x + view.width / 2 - NODE_SIZE.width / 2, y: view.y + view.height / 2 - NODE_SIZE.height / 2 }
  const candidates: Point[] = []
  for (let x = view.x + GAP; x + NEW_NODE_ROOM.width + GAP <= view.x + view.width; x += STEP) {
    for (let y = view.y + GAP; y + NEW_NODE_ROOM.height + GAP <= view.y + view.height; y += STEP) candidates.push({ x, y })
  }
  const distance = (p: Point) => Math.hypot(p.x - center.x, p.y - center.y)
  const blocked = [...taken, ...covered]
  const free = candidates.filter((p) => !blocked.some((box) => overlaps({ ...p, ...NEW_NODE_ROOM }, box))).sort((a, b) => distance(a) - distance(b))[0]
  if (free) return { x: Math.round(free.x), y: Math.round(free.y) }
  const spot = { x: Math.round(center.x), y: Math.round(center.y) }
  while (taken.some((box) => box.x === spot.x && box.y === spot.y)) {
    spot.x += GAP
    spot.y += GAP
  }
  return spot
}

// A new node beside a selected one: this far right of it, the reading order of the flow.
const BESIDE_GAP = 60
const BESIDE_ROWS = 12

/**
 * Where a node added while `selected` is selected goes: right of it, level with it or in the
 * nearest free row below or above; when that column is full, the next one to the right.
 */
export function spotBeside(nodes: FlowNode[], selected: FlowNode): Point {
  const taken = nodes.map(boxOf)
  const from = boxOf(selected)
  for (let column = 0; ; column++) {
    const x = from.x + from.width + BESIDE_GAP + column * (NODE_SIZE.width + BESIDE_GAP)
    for (let row = 0; row <= 2 * BESIDE_ROWS; row++) {
      const y = from.y + (row % 2 === 0 ? 1 : -1) * Math.ceil(row / 2) * STEP
      const room = { x, y, ...NEW_NODE_ROOM }
      if (!taken.some((box) => overlaps(room, box))) return { x: Math.round(x), y: Math.round(y) }
    }
  }
}

/** True when all of `box` is in `view` and none of it under `covered`. */
export const inSight = (box: Box, view: Box, covered: readonly Box[] = []) => inside(box, view) && !covered.some((c) => overlaps(box, c, 0))

/** The room a new node at `position` takes. */
export const boxAt = (position: Point): Box => ({ ...position, ...NEW_NODE_ROOM })

/** True when `box` lies wholly inside `view`. */
export const inside = (box: Box, view: Box) => box.x >= view.x && box.y >= view.y && box.x + box.width <= view.x + view.width && box.y + box.height <= view.y + view.height

/** The part of the flow a canvas element shows: its screen rectangle in the flow's coordinates. */
export function visibleArea(rect: { left: number; top: number; right: number; bottom: number }, toFlow: (screen: Point) => Point): Box {
  const topLeft = toFlow({ x: rect.left, y: rect.top })
  const bottomRight = toFlow({ x: rect.right, y: rect.bottom })
  return { x: topLeft.x, y: topLeft.y, width: bottomRight.x - topLeft.x, height: bottomRight.y - topLeft.y }
}
