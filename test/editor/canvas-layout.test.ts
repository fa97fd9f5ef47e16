import t from 'tap'
import { TANGLED_FLOW } from '../fixtures/tangled-flow.js'
import { importWebModules } from '../helpers/web-modules.js'

// Where the editor puts things, without a browser: Arrange's layout (web/src/shared/flow-layout.ts),
// the edges' way around the nodes (canvas/edge-route.ts), where a new node lands
// (flow/placement.ts) and how a count is said (the plurals of shared/i18n.tsx). canvas.test.ts
// drives them in the browser.

interface Point {
  x: number
  y: number
}
interface Box extends Point {
  width: number
  height: number
}
interface Node {
  id: string
  type?: string
  position: Point
  data: Record<string, unknown>
  measured?: { width: number; height: number }
  selected?: boolean
}
interface Web {
  layOutFlow(nodes: { id: string; width: number; height: number }[], edges: { id: string; source: string; target: string }[], options?: object): { positions: Map<string, Point> }
  routeEdge(source: Point, target: Point, nodes: (Box & { id: string })[], sourceId: string, targetId: string): Point[] | undefined
  freeSpot(nodes: Node[], view: Box, covered?: Box[]): Point
  spotBeside(nodes: Node[], selected: Node): Point
  moveNodes(graph: { nodes: Node[]; edges: unknown[] }, positions: Map<string, Point>): { nodes: Node[]; edges: unknown[] }
  translator(lang: 'en' | 'pt'): (key: string, params?: Record<string, string | number>) => string
}

const web = await importWebModules<Web>(
  'web/src/shared/flow-layout.ts',
  'web/src/editor/canvas/edge-route.ts',
  'web/src/editor/flow/placement.ts',
  'web/src/editor/flow/graph-commands.ts',
  'web/src/editor/i18n.tsx',
)

const inside = (p: Point, box: Box) => p.x > box.x && p.x < box.x + box.width && p.y > box.y && p.y < box.y + box.height
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
/** Whether the horizontal or vertical segment from `a` to `b` passes through `box`, sampled every pixel. */
const crosses = (a: Point, b: Point, box: Box) => {
  const steps = Math.max(Math.abs(b.x - a.x), Math.abs(b.y - a.y))
  for (let i = 0; i <= steps; i++) if (inside({ x: a.x + ((b.x - a.x) * i) / steps, y: a.y + ((b.y - a.y) * i) / steps }, box)) return true
  return false
}

// Sizes as the canvas draws them: 200 px wide, a question with its exits taller than a message.
const heights: Record<string, number> = { start: 50, message: 64, question: 130, condition: 96, end: 50 }
const exitsOf = (id: string): (string | null)[] => TANGLED_FLOW.edges.filter((e) => e.source === id).map((e) => e.sourceHandle ?? null)

t.test('Arrange lays a tangled flow of twelve nodes out in columns, and every edge finds a way around the nodes', async (t) => {
  const sized = TANGLED_FLOW.nodes.map((n) => ({ id: n.id, width: 200, height: heights[n.type]! }))
  const { positions } = web.layOutFlow(sized, TANGLED_FLOW.edges, { direction: 'LR', nodeGap: 30, rankGap: 70 })
  const boxes = sized.map((n) => ({ id: n.id, ...positions.get(n.id)!, width: n.width, height: n.height }))
  t.equal(boxes.length, 12, 'every node is placed')
  const overlapping = boxes.flatMap((a, i) => boxes.slice(i + 1).filter((b) => overlap(a, b)).map((b) => `${a.id} and ${b.id}`))
  t.same(overlapping, [], 'no two nodes overlap')
  const box = (id: string) => boxes.find((b) => b.id === id)!
  t.ok(TANGLED_FLOW.edges.filter((e) => e.id !== 'e7').every((e) => box(e.source).x < box(e.target).x), 'each edge but the loop back to the menu runs left to right')

  const through: string[] = []
  for (const edge of TANGLED_FLOW.edges) {
    const from = box(edge.source)
    const to = box(edge.target)
    const exits = exitsOf(edge.source)
    const source = { x: from.x + from.width + 5, y: from.y + ((exits.indexOf(edge.sourceHandle ?? null) + 1) * from.height) / (exits.length + 1) }
    const target = { x: to.x - 5, y: to.y + to.height / 2 }
    const route = web.routeEdge(source, target, boxes, edge.source, edge.target)
    if (!route) {
      through.push(`${edge.id}: no route`)
      continue
    }
    t.same([route[0], route.at(-1)], [source, target], `${edge.id} leaves by its exit and enters by its entry`)
    t.ok(route.slice(1).every((p, i) => p.x === route[i]!.x || p.y === route[i]!.y), `${edge.id} runs in horizontal and vertical segments`)
    for (const [i, p] of route.slice(1).entries()) {
      for (const node of boxes.filter((b) => crosses(route[i]!, p, b))) through.push(`${edge.id} through ${node.id}`)
    }
  }
  t.same(through, [], 'no edge passes through a node, its own two included')
})

t.test('an edge goes around a node in its way, and is straight when nothing is', async (t) => {
  const wall = { id: 'wall', x: 250, y: 0, width: 100, height: 100 }
  t.same(web.routeEdge({ x: 0, y: 50 }, { x: 600, y: 50 }, [], 'a', 'b'), [{ x: 0, y: 50 }, { x: 600, y: 50 }], 'nothing between: a straight line')
  const around = web.routeEdge({ x: 0, y: 50 }, { x: 600, y: 50 }, [wall], 'a', 'b')!
  t.ok(around.length > 2, 'a node between: it bends')
  t.notOk(around.slice(1).some((p, i) => crosses(around[i]!, p, wall)), 'around the node')
})

const node = (id: string, x: number, y: number, selected = false): Node => ({ id, type: 'message', position: { x, y }, data: {}, measured: { width: 200, height: 110 }, selected })

t.test('a node added with one selected lands right of it, in the nearest free row', async (t) => {
  const selected = node('a', 0, 0, true)
  t.same(web.spotBeside([selected], selected), { x: 260, y: 0 }, 'level with it when that is free')
  const nodes = [selected, node('b', 260, 0), node('c', 260, -200)]
  const spot = web.spotBeside(nodes, selected)
  t.equal(spot.x, 260, 'in the column right of it')
  t.notOk(nodes.some((n) => overlap({ ...spot, width: 200, height: 190 }, { ...n.position, width: 200, height: 110 })), 'clear of the nodes already there')
  t.same(spot, { x: 260, y: 160 }, 'in the nearest row that is')
})

t.test('a node added with none selected lands in the visible canvas, never under the minimap or the controls', async (t) => {
  const view = { x: 0, y: 0, width: 800, height: 600 }
  const middle = web.freeSpot([], view)
  const minimap = { x: 300, y: 200, width: 200, height: 200 }
  const spot = web.freeSpot([], view, [minimap])
  t.ok(overlap({ ...middle, width: 200, height: 190 }, minimap), 'the middle of the view would be under it')
  t.notOk(overlap({ ...spot, width: 200, height: 190 }, minimap), 'so the node goes beside it')
  t.ok(spot.x >= 0 && spot.y >= 0 && spot.x + 200 <= 800 && spot.y + 190 <= 600, 'still in view')
})

t.test("Arrange's move: the nodes named go where told, the others stay as they were", async (t) => {
  const graph = { nodes: [node('a', 0, 0), node('b', 10, 10)], edges: [] }
  const moved = web.moveNodes(graph, new Map([['a', { x: 300, y: 40 }]]))
  t.same(moved.nodes[0]!.position, { x: 300, y: 40 })
  t.equal(moved.nodes[1], graph.nodes[1], 'the node not named is the very same')
  t.same(graph.nodes[0]!.position, { x: 0, y: 0 }, 'the graph given is left as it was')
})

t.test('counts are said with the plural of each language', async (t) => {
  const en = web.translator('en')
  const pt = web.translator('pt')
  t.equal(en('node.problems', { count: 1 }), '1 problem')
  t.equal(en('node.problems', { count: 2 }), '2 problems')
  t.equal(pt('node.problems', { count: 1 }), '1 problema')
  t.equal(pt('node.problems', { count: 2 }), '2 problemas')
  t.match(en('status.invalid', { count: 1 }), /^The flow has 1 problem;/)
  t.match(pt('status.invalid', { count: 3 }), /^O fluxo tem 3 problemas;/)
  t.equal(pt('exit.invalid'), 'inválida', 'exits are words of the language too')
})
