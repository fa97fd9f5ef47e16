import t from 'tap'
import { importWebModules } from '../helpers/web-modules.js'

// The editor's commands on its graph (web/src/editor/flow/graph-commands.ts), where a paste lands
// (flow/clipboard.ts) and what a failed save tells (flow/useDraft.ts), without a browser;
// canvas.test.ts, embed.test.ts and drafts.test.ts drive them there.

interface Point {
  x: number
  y: number
}
interface FlowNode {
  id: string
  type?: string
  position: Point
  data: Record<string, unknown>
  selected?: boolean
  deletable?: boolean
}
interface FlowEdge {
  id: string
  source: string
  sourceHandle?: string | null
  target: string
}
interface Graph {
  nodes: FlowNode[]
  edges: FlowEdge[]
}
interface Defaults {
  sectorId?: string
  pipelineId?: string
  stageId?: string
}
interface GraphCommands {
  addNode(graph: Graph, type: string, position: Point, defaults: Defaults): Graph
  selectOnly(graph: Graph, id: string): Graph
  setNodeData(graph: Graph, id: string, data: Record<string, unknown>): Graph
  deleteNode(graph: Graph, id: string): Graph
  linkExit(graph: Graph, id: string, exit: string | null, target: string | null): Graph
  applyCanvasNodeChanges(graph: Graph, changes: object[]): Graph
  nodeChangesEdit(changes: object[]): boolean
  newNodeDefaults(sectors: { id: string }[], pipelines: { id: string; stages: { id: string; order: number }[] }[]): Defaults
}
interface ClipboardModule {
  pasteOffset(clip: Graph, times: number, view: (Point & { width: number; height: number }) | undefined): Point
}
interface Problem {
  path: string
  message: string
}
interface DraftModule {
  failure(error: unknown, sent: Graph & { schemaVersion: 1 }, t: (key: string, params?: Record<string, unknown>) => string): {
    status: { kind: string; text: string }
    message: { type: 'error'; code: string; message: string }
    conflict?: number
    problems?: { byNode: Map<string, Problem[]>; all: unknown[] }
  }
  ApiError: new (status: number, message: string, problems?: Problem[]) => Error
  StaleDraftError: new (message: string, sentDraftVersion: number, currentDraftVersion: number) => Error
}

const web = await importWebModules<GraphCommands & ClipboardModule & DraftModule>(
  'web/src/editor/flow/graph-commands.ts',
  'web/src/editor/flow/clipboard.ts',
  'web/src/editor/flow/useDraft.ts',
  'web/src/editor/api.ts',
)
const commands: GraphCommands = web
const { pasteOffset, failure, ApiError, StaleDraftError } = web

const at = { x: 0, y: 0 }
const rule = (id: string) => ({ id, variable: 'lastMessage', operator: 'equals', value: id })
/** start → check; the check's rules `yes` and `no` and its default exit each lead to their own end. */
const branching = (): Graph => ({
  nodes: [
    { id: 'start', type: 'start', position: at, data: {}, deletable: false },
    { id: 'check', type: 'condition', position: at, data: { rules: [rule('yes'), rule('no')] }, selected: true },
    { id: 'end_yes', type: 'end', position: at, data: {} },
    { id: 'end_no', type: 'end', position: at, data: {} },
    { id: 'end_other', type: 'end', position: at, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', sourceHandle: null, target: 'check' },
    { id: 'e2', source: 'check', sourceHandle: 'yes', target: 'end_yes' },
    { id: 'e3', source: 'check', sourceHandle: 'no', target: 'end_no' },
    { id: 'e4', source: 'check', sourceHandle: 'default', target: 'end_other' },
  ],
})
const edgeIds = (graph: Graph) => graph.edges.map((e) => e.id)
const selectedIds = (graph: Graph) => graph.nodes.filter((n) => n.selected).map((n) => n.id)

t.test('a node added from the palette is selected alone, with a new id and its type’s data for the workspace', async (t) => {
  const defaults = commands.newNodeDefaults([{ id: 'sales' }, { id: 'support' }], [
    { id: 'deals', stages: [{ id: 'won', order: 2 }, { id: 'lead', order: 1 }] },
    { id: 'hiring', stages: [{ id: 'applied', order: 1 }] },
  ])
  t.same(defaults, { sectorId: 'sales', pipelineId: 'deals', stageId: 'lead' }, 'the first sector, the first pipeline and its lowest stage')
  t.same(commands.newNodeDefaults([], []), { sectorId: undefined, pipelineId: undefined, stageId: undefined }, 'none in an empty workspace')

  const before = branching()
  const after = commands.addNode(before, 'kanbanMove', { x: 40, y: 80 }, defaults)
  const added = after.nodes.at(-1)!
  t.match(added.id, /^kanbanMove_/, 'its id names its type')
  t.notOk(before.nodes.some((n) => n.id === added.id), 'and is new')
  t.same({ type: added.type, position: added.position, data: added.data, deletable: added.deletable }, {
    type: 'kanbanMove',
    position: { x: 40, y: 80 },
    data: { pipelineId: 'deals', stageId: 'lead' },
    deletable: true,
  }, "where it was dropped, pointing at the workspace's pipeline and stage")
  t.same(selectedIds(after), [added.id], 'the node selected before is no longer')
  t.equal(before.nodes.filter((n) => n.selected).length, 1, 'the graph given is left as it was')
  t.equal(commands.addNode(before, 'start', at, {}).nodes.at(-1)!.deletable, false, 'a start node cannot be deleted')
})

t.test('editing a node drops the edges of the exits it no longer has, and only those', async (t) => {
  const graph = branching()
  const fewer = commands.setNodeData(graph, 'check', { rules: [rule('yes')] })
  t.same(edgeIds(fewer), ['e1', 'e2', 'e4'], "the edge of the removed rule goes; the default exit's stays")
  t.same(fewer.nodes.find((n) => n.id === 'check')!.data, { rules: [rule('yes')] }, 'the node holds its new data')
  t.equal(commands.setNodeData(graph, 'check', { rules: [rule('yes'), rule('no')] }).edges, graph.edges, 'the same exits keep the very edges')
})

t.test('deleting a node takes its edges with it; the start node stays', async (t) => {
  const graph = branching()
  const deleted = commands.deleteNode(graph, 'check')
  t.same(deleted.nodes.map((n) => n.id), ['start', 'end_yes', 'end_no', 'end_other'], 'the node is gone')
  t.same(edgeIds(deleted), [], 'every edge touched the deleted node')
  t.same(commands.deleteNode(graph, 'start'), graph, 'the start node is not deleted')
})

t.test('an exit leads to one node at most; linking it to none ends the session there', async (t) => {
  const graph = branching()
  const relinked = commands.linkExit(graph, 'check', 'yes', 'end_other')
  const fromYes = relinked.edges.filter((e) => e.source === 'check' && e.sourceHandle === 'yes')
  t.same(fromYes.map((e) => e.target), ['end_other'], 'the new edge replaces the old one')
  t.notOk(edgeIds(graph).includes(fromYes[0]!.id), 'under a new id')
  const unlinked = commands.linkExit(graph, 'check', 'no', null)
  t.same(edgeIds(unlinked), ['e1', 'e2', 'e4'], "the exit's edge is gone")
  t.equal(commands.linkExit(unlinked, 'check', 'no', null), unlinked, 'unlinking an exit with no edge changes nothing')
})

t.test("the canvas's changes: a node removed there takes its edges; only removals and additions are steps of undo", async (t) => {
  const graph = branching()
  const removed = commands.applyCanvasNodeChanges(graph, [{ type: 'remove', id: 'end_no' }])
  t.same(edgeIds(removed), ['e1', 'e2', 'e4'], 'the edge into the removed node goes')
  t.ok(commands.nodeChangesEdit([{ type: 'remove', id: 'end_no' }]), 'a removal is an edit')
  t.notOk(commands.nodeChangesEdit([{ type: 'select', id: 'end_no', selected: true }, { type: 'position', id: 'check', position: at, dragging: true }]), 'selecting and dragging are not')
  t.same(selectedIds(commands.selectOnly(graph, 'end_yes')), ['end_yes'], 'a node selected from the problems list is selected alone')
})

t.test('each paste of one copy lands a step further while that is in view, else in the middle of the view', async (t) => {
  const clip: Graph = { nodes: [{ id: 'm', type: 'message', position: { x: 100, y: 100 }, data: {} }], edges: [] }
  const view = { x: 0, y: 0, width: 1000, height: 800 }
  t.same(pasteOffset(clip, 1, view), { x: 40, y: 40 }, 'the first paste, one step')
  t.same(pasteOffset(clip, 3, view), { x: 120, y: 120 }, 'the third, three')
  t.same(pasteOffset(clip, 1, undefined), { x: 40, y: 40 }, 'with no canvas measured, a step')
  const farAway = { ...view, x: 5000, y: 5000 }
  // The copy's box is 200 × 110 (a node not yet measured): its middle goes to the view's.
  t.same(pasteOffset(clip, 1, farAway), { x: 5000 + 500 - 100 - 100, y: 5000 + 400 - 55 - 100 }, 'out of view, centred in it')
})

t.test('a failed save tells the person and the host what happened', async (t) => {
  const sent = { schemaVersion: 1 as const, ...branching() }
  const say = (key: string, params?: Record<string, unknown>) => (params ? `${key} ${JSON.stringify(params)}` : key)

  const stale = failure(new StaleDraftError('draft changed', 3, 5), sent, say)
  t.same(stale, { conflict: 5, status: { kind: 'error', text: 'status.conflict' }, message: { type: 'error', code: 'draft_conflict', message: 'draft changed' } }, 'a newer draft: the person chooses between it and theirs')

  const invalid = failure(new ApiError(400, 'invalid flow', [{ path: 'nodes[1].data.rules[0].value', message: 'must not be empty' }]), sent, say)
  t.same([invalid.conflict, invalid.status, invalid.message], [undefined, { kind: 'error', text: 'status.invalid {"count":1}' }, { type: 'error', code: 'invalid_flow', message: 'invalid flow' }], 'an invalid flow: how many problems, and the host hears invalid_flow')
  t.same([...invalid.problems!.byNode.keys()], ['check'], 'a problem is shown on the node its path names in what was sent')
  t.notMatch(invalid.problems!.byNode.get('check')![0]!.message, 'nodes[1]', 'in words, not as a path')

  const refused = failure(new ApiError(400, 'bad request'), sent, say)
  t.same([refused.problems, refused.message.code], [undefined, 'request_failed'], 'a 400 without problems is a failed request')
  const offline = failure(new TypeError('Failed to fetch'), sent, say)
  t.same(offline.status, { kind: 'error', text: 'status.failed {"message":"api.unreachable"}' }, 'a service out of reach is told in words')
  t.same(refused.status, { kind: 'error', text: 'status.failed {"message":"api.unknown {\\"detail\\":\\"bad request\\"}"}' }, "words no rule knows are told as such, with the service's after them")
  t.same(offline.message, { type: 'error', code: 'request_failed', message: 'Failed to fetch' }, 'and the host hears request_failed')
})
