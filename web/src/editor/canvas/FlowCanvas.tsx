import { Background, Controls, MiniMap, ReactFlow, useNodesInitialized, useReactFlow } from '@xyflow/react'
import { useEffect, useMemo, useRef, useState, type DragEvent, type RefObject } from 'react'
import { useAriaLabels } from '../a11y'
import type { NodeType } from '../flow-definition'
import type { FlowEdge, FlowNode, ProblemIndex } from '../flow/model'
import { NODE_SIZE, type Point } from '../flow/placement'
import type { CanvasHandlers } from '../flow/useFlowGraph'
import { useT } from '../i18n'
import { isNodeType } from '../nodes'
import type { Theme } from '../route'
import { useReadableFit } from './fit-view'
import { ProblemsContext, UnknownNode, nodeTypes } from './nodes'
import { NodeBoxes, edgeTypes } from './RoutedEdge'
import { DRAG_TYPE } from './Palette'

const EDGE_OPTIONS = { type: 'routed' }

/**
 * The minimap for a canvas `width` px wide: small enough to leave the canvas to the flow
 * (the fit keeps the nodes clear of its strip), and none on a canvas too narrow to spare it.
 */
const minimapSize = (width: number) => (width >= 700 ? { width: 160, height: 100 } : width >= 480 ? { width: 120, height: 75 } : undefined)

function useWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0)
  useEffect(() => {
    const element = ref.current
    if (!element) return
    const observer = new ResizeObserver(([entry]) => setWidth(entry?.contentRect.width ?? 0))
    observer.observe(element)
    return () => observer.disconnect()
  }, [ref])
  return width
}

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

  const minimap = minimapSize(useWidth(canvasRef))
  const fit = useReadableFit()
  // Fit the whole flow once every node has its size (React Flow's own initial fit can run earlier).
  const measured = useNodesInitialized()
  const fitted = useRef(false)
  useEffect(() => {
    if (!measured || fitted.current) return
    fitted.current = true
    void fit()
  }, [measured, fit])

  const onDrop = (event: DragEvent) => {
    const type = event.dataTransfer.getData(DRAG_TYPE)
    if (!isNodeType(type)) return
    event.preventDefault()
    const p = reactFlow.screenToFlowPosition({ x: event.clientX, y: event.clientY })
    onDropNode(type, { x: p.x - NODE_SIZE.width / 2, y: p.y - 30 })
  }

  const boxes = useMemo(
    () => nodes.map((n) => ({ id: n.id, x: n.position.x, y: n.position.y, width: n.measured?.width ?? NODE_SIZE.width, height: n.measured?.height ?? NODE_SIZE.height })),
    [nodes],
  )
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
        <NodeBoxes.Provider value={boxes}>
          <ReactFlow
            nodes={nodes}
            edges={drawnEdges}
            nodeTypes={types}
            edgeTypes={edgeTypes}
            onNodesChange={handlers.onNodesChange}
            onEdgesChange={handlers.onEdgesChange}
            onConnect={handlers.onConnect}
            onNodeDragStart={handlers.onNodeDragStart}
            colorMode={theme}
            deleteKeyCode={['Backspace', 'Delete']}
            minZoom={0.2}
            defaultEdgeOptions={EDGE_OPTIONS}
            proOptions={{ hideAttribution: true }}
            ariaLabelConfig={ariaLabels}
          >
            <Background />
            <Controls showInteractive={false} onFitView={() => void fit(200)} />
            {minimap && <MiniMap pannable zoomable style={minimap} />}
          </ReactFlow>
        </NodeBoxes.Provider>
      </ProblemsContext.Provider>
    </main>
  )
}
