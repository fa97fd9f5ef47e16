// Apart from flow-layout.ts, so that drawing a route does not bring the layout (dagre) with it.

export interface Point {
  x: number
  y: number
}

/** An SVG path through a route's points, its corners rounded so a bend reads as one line. */
export function routePath(points: readonly Point[], radius = 12): string {
  const [first, ...rest] = points
  if (!first) return ''
  let path = `M ${first.x} ${first.y}`
  rest.forEach((point, index) => {
    const next = rest[index + 1]
    if (!next) {
      path += ` L ${point.x} ${point.y}`
      return
    }
    const previous = index === 0 ? first : rest[index - 1]!
    const inLength = Math.hypot(point.x - previous.x, point.y - previous.y)
    const outLength = Math.hypot(next.x - point.x, next.y - point.y)
    const r = Math.min(radius, inLength / 2, outLength / 2)
    if (r < 1) {
      path += ` L ${point.x} ${point.y}`
      return
    }
    const before = { x: point.x - ((point.x - previous.x) / inLength) * r, y: point.y - ((point.y - previous.y) / inLength) * r }
    const after = { x: point.x + ((next.x - point.x) / outLength) * r, y: point.y + ((next.y - point.y) / outLength) * r }
    path += ` L ${round(before.x)} ${round(before.y)} Q ${point.x} ${point.y} ${round(after.x)} ${round(after.y)}`
  })
  return path
}

const round = (value: number) => Math.round(value * 10) / 10
