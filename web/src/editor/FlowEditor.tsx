import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  applyEdgeChanges,
  applyNodeChanges,
  useNodesInitialized,
  useReactFlow,
  type Connection,
  type EdgeChange,
  type NodeChange,
} from '@xyflow/react'
import { useCallback, useEffect, useMemo, useReducer, useRef, useState, type DragEvent } from 'react'
import { ApiError, type FlowApi, type FlowDetail } from './api'
import { useT } from './i18n'
import { DRAG_TYPE, Palette } from './canvas/Palette'
import { ProblemsContext, UnknownNode, nodeTypes } from './canvas/nodes'
import { historyReducer, initialHistory } from './flow/history'
import { typedKanbanValues } from './flow/kanban-values'
import { connect, emptyProblems, indexProblems, pruneEdges, renameExit, toDefinition, toGraph, uniqueId, type FlowNode, type Graph, type ProblemIndex } from './flow/model'
import type { FlowDefinition, NodeType } from './flow/types'
import { isNodeType, nodeUis } from './nodes'
import type { EditorMessage } from './protocol'
import type { Theme } from './route'
import { NodePanel } from './panels/NodePanel'
import { ProblemsPanel } from './panels/ProblemsPanel'
import { VariablesPanel } from './panels/VariablesPanel'
import { useWorkspace } from './workspace'

export interface FlowEditorProps {
  flow: FlowDetail
  api: FlowApi
  theme: Theme
  /** Tells the host page (saved, published, error). */
  notify(message: EditorMessage): void
}

export function FlowEditor(props: FlowEditorProps) {
  return (
    <ReactFlowProvider>
      <Editor {...props} />
    </ReactFlowProvider>
  )
}

type Panel = 'node' | 'variables' | 'problems'
type Status = { kind: 'ok' | 'error'; text: string } | undefined

const isTyping = (target: EventTarget | null) => target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))

// The nodes' CSS width; new flows space them 240 apart.
const FIT_VIEW = { padding: 0.15, maxZoom: 1 }

const NODE_SIZE = { width: 200, height: 110 }

/** Near `center`, the first place (going down) where a new node covers no other. */
function freeSpot(nodes: FlowNode[], center: { x: number; y: number }): { x: number; y: number } {
  const spot = { x: Math.round(center.x - NODE_SIZE.width / 2), y: Math.round(center.y - NODE_SIZE.height / 2) }
  const overlaps = () =>
    nodes.some((n) => {
      const width = n.measured?.width ?? NODE_SIZE.width
      const height = n.measured?.height ?? NODE_SIZE.height
      return spot.x < n.position.x + width + 20 && n.position.x < spot.x + NODE_SIZE.width + 20 && spot.y < n.position.y + height + 20 && n.position.y < spot.y + NODE_SIZE.height + 20
    })
  for (let i = 0; i < 50 && overlaps(); i++) spot.y += 60
  return spot
}

function Editor({ flow, api, theme, notify }: FlowEditorProps) {
  const t = useT()
  const workspace = useWorkspace()
  const reactFlow = useReactFlow()
  const canvasRef = useRef<HTMLDivElement>(null)

  const base = flow.definition
  // Values saved as text for number and yes/no fields are converted where they read as such; the
  // draft then differs from what the editor holds, so it shows unsaved changes until it is saved.
  const [history, dispatch] = useReducer(historyReducer, base, (definition) => initialHistory(typedKanbanValues(toGraph(definition), workspace.pipelines)))
  const graph = history.present
  const definition = useMemo(() => toDefinition(base, graph), [base, graph])
  const json = useMemo(() => JSON.stringify(definition), [definition])
  const [savedJson, setSavedJson] = useState(() => JSON.stringify(toDefinition(base, toGraph(base))))
  const dirty = json !== savedJson
  const [publishedVersion, setPublishedVersion] = useState(flow.publishedVersion)
  const [problems, setProblems] = useState<ProblemIndex>(emptyProblems)
  const [panel, setPanel] = useState<Panel>('node')
  const [busy, setBusy] = useState<'saving' | 'publishing' | 'validating'>()
  const [status, setStatus] = useState<Status>()

  const change = useCallback((update: (graph: Graph) => Graph, record = true, key?: string) => dispatch({ type: 'change', update, record, key, at: Date.now() }), [])

  // --- canvas events -------------------------------------------------------------------------

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      const record = changes.some((c) => c.type === 'remove' || c.type === 'add' || c.type === 'replace')
      change((g) => pruneEdges({ ...g, nodes: applyNodeChanges(changes, g.nodes) }), record)
    },
    [change],
  )
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => change((g) => ({ ...g, edges: applyEdgeChanges(changes, g.edges) }), changes.some((c) => c.type === 'remove')),
    [change],
  )
  const onConnect = useCallback(
    (connection: Connection) => {
      if (connection.source && connection.target) change((g) => connect(g, connection.source, connection.sourceHandle ?? null, connection.target))
    },
    [change],
  )
  const onNodeDragStart = useCallback(() => dispatch({ type: 'checkpoint' }), [])

  const addNode = useCallback(
    (type: NodeType, at?: { x: number; y: number }) => {
      let position = at
      if (!position) {
        const box = canvasRef.current?.getBoundingClientRect()
        const center = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : { x: 400, y: 300 }
        position = freeSpot(graph.nodes, reactFlow.screenToFlowPosition(center))
      }
      const pipeline = workspace.pipelines[0]
      const stage = pipeline ? [...pipeline.stages].sort((a, b) => a.order - b.order)[0] : undefined
      const data = nodeUis[type].newData({ sectorId: workspace.sectors[0]?.id, pipelineId: pipeline?.id, stageId: stage?.id })
      const placed = position
      change((g) => {
        const id = uniqueId(type, new Set(g.nodes.map((n) => n.id)))
        const node: FlowNode = { id, type, position: placed, data, selected: true, deletable: type !== 'start' }
        return { ...g, nodes: [...g.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node] }
      })
      setPanel('node')
    },
    [change, graph.nodes, reactFlow, workspace.pipelines, workspace.sectors],
  )

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(DRAG_TYPE)
      if (!isNodeType(type)) return
      event.preventDefault()
      const p = reactFlow.screenToFlowPosition({ x: event.clientX, y: event.clientY })
      addNode(type, { x: p.x - NODE_SIZE.width / 2, y: p.y - 30 })
    },
    [addNode, reactFlow],
  )

  const selectNode = useCallback(
    (id: string) => {
      change((g) => ({ ...g, nodes: g.nodes.map((n) => ({ ...n, selected: n.id === id })) }), false)
      setPanel('node')
      const node = graph.nodes.find((n) => n.id === id)
      if (node) void reactFlow.setCenter(node.position.x + NODE_SIZE.width / 2, node.position.y + 40, { duration: 200, zoom: reactFlow.getZoom() })
    },
    [change, graph.nodes, reactFlow],
  )

  const updateNodeData = useCallback(
    (id: string, data: Record<string, unknown>) => change((g) => pruneEdges({ ...g, nodes: g.nodes.map((n) => (n.id === id ? { ...n, data } : n)) }), true, `data:${id}`),
    [change],
  )
  const renameNodeExit = useCallback((id: string, from: string, to: string) => change((g) => renameExit(g, id, from, to), true, `data:${id}`), [change])
  const deleteNode = useCallback(
    (id: string) => change((g) => pruneEdges({ ...g, nodes: g.nodes.filter((n) => n.id !== id || n.type === 'start') })),
    [change],
  )

  // Fit the whole flow once every node has its size (React Flow's own initial fit can run earlier).
  const measured = useNodesInitialized()
  const fitted = useRef(false)
  useEffect(() => {
    if (!measured || fitted.current) return
    fitted.current = true
    void reactFlow.fitView(FIT_VIEW)
  }, [measured, reactFlow])

  const undo = useCallback(() => dispatch({ type: 'undo' }), [])
  const redo = useCallback(() => dispatch({ type: 'redo' }), [])
  // Ctrl/⌘+S saves from anywhere, a form field included; undo and redo leave a field's own to it.
  const saveRef = useRef<() => Promise<boolean>>(async () => false)
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey)) return
      const key = event.key.toLowerCase()
      if (key === 's') void saveRef.current()
      else if (isTyping(event.target)) return
      else if (key === 'z' && !event.shiftKey) undo()
      else if ((key === 'z' && event.shiftKey) || key === 'y') redo()
      else return
      event.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [undo, redo])

  // --- save, publish, check -----------------------------------------------------------------

  const failed = useCallback(
    (error: unknown, sent: FlowDefinition) => {
      if (error instanceof ApiError && error.status === 400 && error.problems.length > 0) {
        const index = indexProblems(sent, error.problems)
        setProblems(index)
        setStatus({ kind: 'error', text: t('status.invalid', { count: error.problems.length }) })
        notify({ type: 'error', code: 'invalid_flow', message: error.message })
        return
      }
      const message = error instanceof Error ? error.message : String(error)
      setStatus({ kind: 'error', text: t('status.failed', { message }) })
      notify({ type: 'error', code: 'request_failed', message })
    },
    [notify, t],
  )

  const save = useCallback(async (): Promise<boolean> => {
    const sent = definition
    setBusy('saving')
    setStatus(undefined)
    try {
      const saved = await api.saveDraft(flow.id, sent)
      setSavedJson(JSON.stringify(sent))
      setProblems(emptyProblems())
      setStatus({ kind: 'ok', text: t('status.draftSaved') })
      notify({ type: 'saved', flowId: flow.id, updatedAt: saved.updatedAt })
      return true
    } catch (error) {
      failed(error, sent)
      return false
    } finally {
      setBusy(undefined)
    }
  }, [api, definition, failed, flow.id, notify, t])

  saveRef.current = () => (dirty && busy === undefined ? save() : Promise.resolve(false))

  // The host hears when the draft starts and stops having unsaved changes; the browser asks before
  // a page with unsaved changes is left.
  useEffect(() => {
    notify({ type: 'dirty', flowId: flow.id, dirty })
    if (!dirty) return
    const guard = (event: BeforeUnloadEvent) => event.preventDefault()
    window.addEventListener('beforeunload', guard)
    return () => window.removeEventListener('beforeunload', guard)
  }, [dirty, flow.id, notify])

  const publish = useCallback(async () => {
    if (dirty && !(await save())) return
    setBusy('publishing')
    try {
      const { version, publishedAt } = await api.publish(flow.id)
      setPublishedVersion(version)
      setProblems(emptyProblems())
      setStatus({ kind: 'ok', text: t('status.publishedNow', { version }) })
      notify({ type: 'published', flowId: flow.id, version, publishedAt })
    } catch (error) {
      failed(error, definition)
    } finally {
      setBusy(undefined)
    }
  }, [api, definition, dirty, failed, flow.id, notify, save, t])

  const validate = useCallback(async () => {
    const sent = definition
    setBusy('validating')
    try {
      const result = await api.validate(sent)
      setProblems(indexProblems(sent, result.problems))
      setStatus(result.valid ? { kind: 'ok', text: t('status.valid') } : { kind: 'error', text: t('status.invalid', { count: result.problems.length }) })
      if (!result.valid) setPanel('problems')
    } catch (error) {
      failed(error, sent)
    } finally {
      setBusy(undefined)
    }
  }, [api, definition, failed, t])

  // --- render -------------------------------------------------------------------------------

  const selected = graph.nodes.filter((n) => n.selected)
  const selectedNode = selected.length === 1 ? selected[0] : undefined
  const edges = useMemo(() => graph.edges.map((e) => (problems.byEdge.has(e.id) ? { ...e, className: 'has-problems' } : e)), [graph.edges, problems])
  // React Flow wants a stable map: it changes only when a type the editor does not know appears.
  const unknownTypes = [...new Set(graph.nodes.map((n) => n.type ?? ''))].filter((type) => !isNodeType(type)).join('\u0000')
  const types = useMemo(
    () => (unknownTypes ? { ...nodeTypes, ...Object.fromEntries(unknownTypes.split('\u0000').map((type) => [type, UnknownNode])) } : nodeTypes),
    [unknownTypes],
  )

  return (
    <div className="editor">
      <header className="toolbar">
        <h1 title={flow.name}>{flow.name}</h1>
        <span className={`save-state ${dirty ? 'dirty' : 'clean'}`} data-testid="save-state">
          {dirty ? `● ${t('status.unsaved')}` : t('status.saved')}
        </span>
        <span className="muted" data-testid="published-version">
          {t('status.published', { version: publishedVersion })}
        </span>
        <span className="spacer" />
        <button type="button" className="secondary" onClick={undo} disabled={history.past.length === 0} title={`${t('toolbar.undo')} (Ctrl+Z)`}>
          ↶ {t('toolbar.undo')}
        </button>
        <button type="button" className="secondary" onClick={redo} disabled={history.future.length === 0} title={`${t('toolbar.redo')} (Ctrl+Shift+Z)`}>
          ↷ {t('toolbar.redo')}
        </button>
        <button type="button" className="secondary" onClick={() => void reactFlow.fitView({ ...FIT_VIEW, duration: 200 })}>
          ⤢ {t('toolbar.fitView')}
        </button>
        <button type="button" className="secondary" onClick={() => void validate()} disabled={busy !== undefined}>
          ✓ {t('toolbar.validate')}
        </button>
        <button type="button" onClick={() => void save()} disabled={busy !== undefined || !dirty} data-testid="save">
          {busy === 'saving' ? t('toolbar.saving') : t('toolbar.save')}
        </button>
        <button type="button" className="primary" onClick={() => void publish()} disabled={busy !== undefined} data-testid="publish">
          {busy === 'publishing' ? t('toolbar.publishing') : t('toolbar.publish')}
        </button>
      </header>
      {status && (
        <div className={`status ${status.kind}`} role="status" data-testid="status">
          {status.text}
          <button type="button" className="icon" aria-label={t('panel.close')} onClick={() => setStatus(undefined)}>
            ×
          </button>
        </div>
      )}
      <div className="workspace">
        <Palette onAdd={(type) => addNode(type)} hasStart={graph.nodes.some((n) => n.type === 'start')} />
        <div className="canvas" ref={canvasRef} onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
          <ProblemsContext.Provider value={problems}>
            <ReactFlow
              nodes={graph.nodes}
              edges={edges}
              nodeTypes={types}
              onNodesChange={onNodesChange}
              onEdgesChange={onEdgesChange}
              onConnect={onConnect}
              onNodeDragStart={onNodeDragStart}
              colorMode={theme}
              deleteKeyCode={['Backspace', 'Delete']}
              minZoom={0.2}
              defaultEdgeOptions={{ type: 'smoothstep' }}
              proOptions={{ hideAttribution: true }}
            >
              <Background />
              <Controls showInteractive={false} />
              <MiniMap pannable zoomable />
            </ReactFlow>
          </ProblemsContext.Provider>
        </div>
        <aside className="side-panel">
          <nav className="tabs" role="tablist">
            <button type="button" role="tab" aria-selected={panel === 'node'} onClick={() => setPanel('node')}>
              {t('panel.properties')}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'variables'} onClick={() => setPanel('variables')} data-testid="tab-variables">
              {t('toolbar.variables')}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'problems'} onClick={() => setPanel('problems')} className={problems.all.length ? 'has-problems' : ''}>
              {t('toolbar.problems', { count: problems.all.length })}
            </button>
          </nav>
          <div className="panel-body">
            {panel === 'node' &&
              (selectedNode ? (
                <NodePanel
                  node={selectedNode}
                  problems={problems.byNode.get(selectedNode.id)}
                  onChange={(data) => updateNodeData(selectedNode.id, data)}
                  onRenameExit={(from, to) => renameNodeExit(selectedNode.id, from, to)}
                  onDelete={() => deleteNode(selectedNode.id)}
                />
              ) : (
                <p className="hint">{t('panel.noSelection')}</p>
              ))}
            {panel === 'variables' && <VariablesPanel />}
            {panel === 'problems' && <ProblemsPanel problems={problems} onSelectNode={selectNode} />}
          </div>
        </aside>
      </div>
    </div>
  )
}
