import { Background, Controls, MiniMap, ReactFlow, useNodesInitialized, useReactFlow } from '@xyflow/react'
import { useEffect, useMemo, useRef, type DragEvent, type RefObject } from 'react'
import { useAriaLabels } from '../a11y'
import type { NodeType } from '../flow-definition'
import type { FlowEdge, FlowNode, ProblemIndex } from '../flow/model'
import { NODE_SIZE, type Point } from '../flow/placement'
import type { CanvasHandlers } from '../flow/useFlowGraph'
import { useT } from '../i18n'
import { isNodeType } from '../nodes'
import type { Theme } from '../route'
import { READABLE_FIT_VIEW } from './fit-view'
import { ProblemsContext, UnknownNode, nodeTypes } from './nodes'
import { DRAG_TYPE } from './Palette'

export interface FlowCanvasProps {
  canvasRef: RefObject<HTMLElement | null>
  /** The nodes as drawn (the test panel marks the one its session waits at). */
  nodes: FlowNode[]
  edges: FlowEdge[]
  problems: ProblemIndex
  handlers: CanvasHandlers
  theme: Theme
  /** A node type was dropped from the palette at `at`. */
  onDropNode(type: NodeType, at: Point): void
}

/** The canvas: the flow drawn by React Flow, its problems on its nodes and edges, and the palette's drop target. */
export function FlowCanvas({ canvasRef, nodes, edges, problems, handlers, theme, onDropNode }: FlowCanvasProps) {
  const t = useT()
  const reactFlow = useReactFlow()
  const ariaLabels = useAriaLabels()

  // Fit the whole flow once every node has its size (React Flow's own initial fit can run earlier).
  const measured = useNodesInitialized()
  const fitted = useRef(false)
  useEffect(() => {
    if (!measured || fitted.current) return
    fitted.current = true
    void reactFlow.fitView(READABLE_FIT_VIEW)
  }, [measured, reactFlow])

  const onDrop = (event: DragEvent) => {
    const type = event.dataTransfer.getData(DRAG_TYPE)
    if (!isNodeType(type)) return
    event.preventDefault()
    const p = reactFlow.screenToFlowPosition({ x: event.clientX, y: event.clientY })
    onDropNode(type, { x: p.x - NODE_SIZE.width / 2, y: p.y - 30 })
  }

  const drawnEdges = useMemo(() => edges.map((e) => (problems.byEdge.has(e.id) ? { ...e, className: 'has-problems' } : e)), [edges, problems])
  // React Flow wants a stable map: it changes only when a type the editor does not know appears.
  const unknownTypes = [...new Set(nodes.map((n) => n.type ?? ''))].filter((type) => !isNodeType(type)).join('\u0000')
  const types = useMemo(
    () => (unknownTypes ? { ...nodeTypes, ...Object.fromEntries(unknownTypes.split('\u0000').map((type) => [type, UnknownNode])) } : nodeTypes),
    [unknownTypes],
  )

  return (
    <main className="canvas" ref={canvasRef} onDragOver={(e) => e.preventDefault()} onDrop={onDrop} aria-label={t('a11y.canvas')}>
      <ProblemsContext.Provider value={problems}>
        <ReactFlow
          nodes={nodes}
          edges={drawnEdges}
          nodeTypes={types}
          onNodesChange={handlers.onNodesChange}
          onEdgesChange={handlers.onEdgesChange}
          onConnect={handlers.onConnect}
          onNodeDragStart={handlers.onNodeDragStart}
          colorMode={theme}
          deleteKeyCode={['Backspace', 'Delete']}
          minZoom={0.2}
          defaultEdgeOptions={{ type: 'smoothstep' }}
          proOptions={{ hideAttribution: true }}
          ariaLabelConfig={ariaLabels}
        >
          <Background />
          <Controls showInteractive={false} fitViewOptions={READABLE_FIT_VIEW} />
          <MiniMap pannable zoomable />
        </ReactFlow>
      </ProblemsContext.Provider>
    </main>
  )
}
