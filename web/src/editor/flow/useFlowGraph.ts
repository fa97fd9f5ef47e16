import { useReactFlow, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react'
import { useCallback, useMemo, useReducer, useState, type RefObject } from 'react'
import type { FlowDefinition, FlowSettings, NodeType } from '../flow-definition'
import { useWorkspace } from '../workspace'
import * as commands from './graph-commands'
import { historyReducer, initialHistory } from './history'
import { typedKanbanValues } from './kanban-values'
import { connect, emptyProblems, exitsOf, renameExit, toDefinition, toGraph, withSetting, type FlowEdge, type FlowNode, type Graph, type ProblemIndex } from './model'
import { boxAt, freeSpot, inSight, NODE_SIZE, spotBeside, visibleArea, type Box, type Point } from './placement'
import { withoutNode } from './problem-text'
import { isTyping, useCtrlKeys } from './shortcuts'
import { useClipboard, type Clipboard } from './useClipboard'

/** React Flow's callbacks, each turning what the canvas did into a change of the graph. */
export interface CanvasHandlers {
  onNodesChange(changes: NodeChange<FlowNode>[]): void
  onEdgesChange(changes: EdgeChange[]): void
  onConnect(connection: Connection): void
  onNodeDragStart(): void
}

/** The flow being edited, its problems, and what a person can do to it. */
export interface FlowGraph {
  graph: Graph
  /** The document to save: the graph in the format's terms. */
  definition: FlowDefinition
  /** What the last check or save found, less the nodes edited since. */
  problems: ProblemIndex
  canUndo: boolean
  canRedo: boolean
  undo(): void
  redo(): void
  canvas: CanvasHandlers
  clipboard: Clipboard
  /**
   * Adds a node at `at`; else right of the selected node, or at a free spot of the visible canvas
   * that the minimap and the zoom controls leave; the view follows it.
   */
  addNode(type: NodeType, at?: Point): void
  /** Lays the whole flow out left to right by its edges (shared/flow-layout.ts), as one step undo takes back. */
  arrange(): Promise<void>
  /** Selects the node alone and brings it into view. */
  selectNode(id: string): void
  updateNodeData(id: string, data: Record<string, unknown>): void
  renameNodeExit(id: string, from: string, to: string): void
  deleteNode(id: string): void
  linkExit(id: string, exit: string | null, target: string | null): void
  showProblems(problems: ProblemIndex): void
  /** Sets one of the flow's settings, or takes it out (undefined); the others stay as they are. Not a step of undo. */
  setSetting<Name extends keyof FlowSettings & string>(name: Name, value: FlowSettings[Name] | undefined): void
  /** Makes `definition` (a published version's) the content, as one change undo can take back. */
  load(definition: FlowDefinition): void
}

/**
 * The graph state of the editor, with undo and redo (Ctrl/⌘+Z, Ctrl/⌘+Shift+Z or Y outside form
 * fields) and the clipboard. `canvasRef` is the canvas's element: new and pasted nodes land in
 * the part of the flow it shows.
 */
export function useFlowGraph(initial: FlowDefinition, canvasRef: RefObject<HTMLElement | null>): FlowGraph {
  const workspace = useWorkspace()
  const reactFlow = useReactFlow()
  const [base, setBase] = useState(initial)
  // Values saved as text for number and yes/no fields are converted where they read as such; the
  // draft then differs from what the editor holds, so it shows unsaved changes until it is saved.
  const [history, dispatch] = useReducer(historyReducer, initial, (definition) => initialHistory(typedKanbanValues(toGraph(definition), workspace.pipelines)))
  const graph = history.present
  const definition = useMemo(() => toDefinition(base, graph), [base, graph])
  const [problems, setProblems] = useState<ProblemIndex>(emptyProblems)

  const change = useCallback((update: (graph: Graph) => Graph, record = true, key?: string) => dispatch({ type: 'change', update, record, key, at: Date.now() }), [])
  const undo = useCallback(() => dispatch({ type: 'undo' }), [])
  const redo = useCallback(() => dispatch({ type: 'redo' }), [])

  const canvas = useMemo<CanvasHandlers>(
    () => ({
      onNodesChange: (changes) => change((g) => commands.applyCanvasNodeChanges(g, changes), commands.nodeChangesEdit(changes)),
      onEdgesChange: (changes) => change((g) => commands.applyCanvasEdgeChanges(g, changes), commands.edgeChangesEdit(changes)),
      onConnect: ({ source, sourceHandle, target }) => {
        if (source && target) change((g) => connect(g, source, sourceHandle ?? null, target))
      },
      onNodeDragStart: () => dispatch({ type: 'checkpoint' }),
    }),
    [change],
  )

  // The part of the flow the canvas shows, and the parts of that the minimap and the zoom controls hide.
  const sight = useCallback((): { view: Box; covered: Box[] } | undefined => {
    const canvas = canvasRef.current
    if (!canvas) return undefined
    const inFlow = (element: Element) => visibleArea(element.getBoundingClientRect(), reactFlow.screenToFlowPosition)
    const covered = [...canvas.querySelectorAll('.react-flow__minimap, .react-flow__controls')].map(inFlow).filter((box) => box.width > 0)
    return { view: inFlow(canvas), covered }
  }, [canvasRef, reactFlow])

  const addNode = useCallback(
    (type: NodeType, at?: Point) => {
      const seen = sight()
      const selected = graph.nodes.filter((n) => n.selected)
      const position = at ?? (selected.length === 1 ? spotBeside(graph.nodes, selected[0]!) : seen ? freeSpot(graph.nodes, seen.view, seen.covered) : { x: 0, y: 0 })
      const defaults = commands.newNodeDefaults(workspace.sectors, workspace.pipelines)
      change((g) => commands.addNode(g, type, position, defaults))
      const box = boxAt(position)
      if (!at && seen && !inSight(box, seen.view, seen.covered)) {
        void reactFlow.setCenter(box.x + box.width / 2, box.y + box.height / 2, { zoom: reactFlow.getZoom(), duration: 200 })
      }
    },
    [change, graph.nodes, reactFlow, sight, workspace.pipelines, workspace.sectors],
  )

  const arrange = useCallback(async () => {
    // The layout (dagre) loads with the first Arrange: the editor opens without it.
    const { layOutFlow } = await import('../../shared/flow-layout')
    // Each node's edges in the order of its exits, so that its targets tend to stack as its exits do.
    const edges = graph.nodes.flatMap((node) => {
      const exits = exitsOf(node.type, node.data).map((exit) => exit.id)
      const order = (edge: FlowEdge) => exits.indexOf(edge.sourceHandle ?? null)
      return graph.edges.filter((edge) => edge.source === node.id).sort((a, b) => order(a) - order(b))
    })
    const sized = graph.nodes.map((n) => ({ id: n.id, width: n.measured?.width ?? NODE_SIZE.width, height: n.measured?.height ?? NODE_SIZE.height }))
    const { positions } = layOutFlow(sized, edges, { direction: 'LR', nodeGap: 30, rankGap: 70 })
    change((g) => commands.moveNodes(g, positions))
  }, [change, graph])

  const selectNode = useCallback(
    (id: string) => {
      change((g) => commands.selectOnly(g, id), false)
      const node = graph.nodes.find((n) => n.id === id)
      if (node) void reactFlow.setCenter(node.position.x + NODE_SIZE.width / 2, node.position.y + 40, { duration: 200, zoom: reactFlow.getZoom() })
    },
    [change, graph.nodes, reactFlow],
  )

  // Typing into one node's form within a second is one step of undo; what was said of the node goes.
  const editNode = useCallback(
    (id: string, edit: (graph: Graph) => Graph) => {
      change(edit, true, `data:${id}`)
      setProblems((p) => withoutNode(p, id))
    },
    [change],
  )
  const updateNodeData = useCallback((id: string, data: Record<string, unknown>) => editNode(id, (g) => commands.setNodeData(g, id, data)), [editNode])
  const renameNodeExit = useCallback((id: string, from: string, to: string) => editNode(id, (g) => renameExit(g, id, from, to)), [editNode])
  const deleteNode = useCallback((id: string) => change((g) => commands.deleteNode(g, id)), [change])
  const linkExit = useCallback((id: string, exit: string | null, target: string | null) => change((g) => commands.linkExit(g, id, exit, target)), [change])

  const load = useCallback(
    (loaded: FlowDefinition) => {
      setBase(loaded)
      change(() => typedKanbanValues(toGraph(loaded), workspace.pipelines))
      setProblems(emptyProblems())
    },
    [change, workspace.pipelines],
  )

  const setSetting = useCallback<FlowGraph['setSetting']>((name, value) => setBase((current) => withSetting(current, name, value)), [])

  const clipboard = useClipboard(graph, change, canvasRef)

  useCtrlKeys((event, key) => {
    if (isTyping(event.target)) return
    if (key === 'z' && !event.shiftKey) undo()
    else if ((key === 'z' && event.shiftKey) || key === 'y') redo()
    else return
    event.preventDefault()
  })

  return {
    graph,
    definition,
    problems,
    canUndo: history.past.length > 0,
    canRedo: history.future.length > 0,
    undo,
    redo,
    canvas,
    clipboard,
    addNode,
    arrange,
    selectNode,
    updateNodeData,
    renameNodeExit,
    deleteNode,
    linkExit,
    showProblems: setProblems,
    setSetting,
    load,
  }
}
