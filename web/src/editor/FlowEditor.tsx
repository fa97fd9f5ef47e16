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
import { ApiError, StaleDraftError, type FlowApi, type FlowDetail } from './api'
import { useT } from './i18n'
import { READABLE_FIT_VIEW } from './canvas/fit-view'
import { DRAG_TYPE, Palette } from './canvas/Palette'
import { ProblemsContext, UnknownNode, nodeTypes } from './canvas/nodes'
import { historyReducer, initialHistory } from './flow/history'
import { typedKanbanValues } from './flow/kanban-values'
import { connect, disconnect, emptyProblems, indexProblems, pruneEdges, renameExit, toDefinition, toGraph, uniqueId, type FlowNode, type Graph, type ProblemIndex } from './flow/model'
import type { FlowDefinition, NodeType } from './flow-definition'
import { isNodeType, nodeUis } from './nodes'
import { forPeople, withoutNode } from './flow/problem-text'
import { SaveConflict } from './dialogs/SaveConflict'
import { VersionsPanel } from './panels/VersionsPanel'
import type { EditorMessage } from './protocol'
import type { Theme } from './route'
import { NodePanel } from './panels/NodePanel'
import { ProblemsPanel } from './panels/ProblemsPanel'
import { VariablesPanel } from './panels/VariablesPanel'
import { TestPanel } from './test-panel/TestPanel'
import { markWaiting } from './test-panel/highlight'
import { useWorkspace } from './workspace'
import { isTyping, useClipboard } from './canvas/useClipboard'
import { SIDE_PANEL, SkipToPanel, useAriaLabels } from './a11y'
import { freeSpot, NODE_SIZE, visibleArea } from './flow/placement'
import { NextNodes } from './panels/NextNodes'
import { CanvasActions } from './panels/CanvasActions'

export interface FlowEditorProps {
  flow: FlowDetail
  api: FlowApi
  theme: Theme
  /** Tells the host page (saved, published, error). */
  notify(message: EditorMessage): void
}

export function FlowEditor(props: FlowEditorProps) {
  // "Reload theirs" starts the editor afresh on the draft saved meanwhile.
  const [loaded, setLoaded] = useState({ flow: props.flow, generation: 0 })
  const reload = useCallback((flow: FlowDetail) => setLoaded((previous) => ({ flow, generation: previous.generation + 1 })), [])
  return (
    <ReactFlowProvider>
      <Editor key={loaded.generation} {...props} flow={loaded.flow} reloaded={loaded.generation > 0} onReload={reload} />
    </ReactFlowProvider>
  )
}

interface EditorProps extends FlowEditorProps {
  reloaded: boolean
  onReload(flow: FlowDetail): void
}

type Panel = 'node' | 'variables' | 'problems' | 'versions'
type Status = { kind: 'ok' | 'error'; text: string } | undefined

function Editor({ flow, api, theme, notify, reloaded, onReload }: EditorProps) {
  const t = useT()
  const workspace = useWorkspace()
  const reactFlow = useReactFlow()
  const canvasRef = useRef<HTMLDivElement>(null)

  const [base, setBase] = useState(flow.definition)
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
  const [status, setStatus] = useState<Status>(() => (reloaded ? { kind: 'ok', text: t('status.reloaded') } : undefined))
  // The draft version this editor's changes are based on; a save sends it (If-Match).
  const draftVersion = useRef(flow.draftVersion)
  /** Set when a save found a newer draft: that draft's version, until the person chooses. */
  const [conflict, setConflict] = useState<number>()
  const [testing, setTesting] = useState(false)
  const [waitingAt, setWaitingAt] = useState<string | null>(null)

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
        position = box ? freeSpot(graph.nodes, visibleArea(box, reactFlow.screenToFlowPosition)) : { x: 0, y: 0 }
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
    (id: string, data: Record<string, unknown>) => {
      change((g) => pruneEdges({ ...g, nodes: g.nodes.map((n) => (n.id === id ? { ...n, data } : n)) }), true, `data:${id}`)
      setProblems((p) => withoutNode(p, id))
    },
    [change],
  )
  const renameNodeExit = useCallback(
    (id: string, from: string, to: string) => {
      change((g) => renameExit(g, id, from, to), true, `data:${id}`)
      setProblems((p) => withoutNode(p, id))
    },
    [change],
  )
  const deleteNode = useCallback(
    (id: string) => change((g) => pruneEdges({ ...g, nodes: g.nodes.filter((n) => n.id !== id || n.type === 'start') })),
    [change],
  )
  const linkExit = useCallback(
    (id: string, exit: string | null, target: string | null) => change((g) => (target === null ? disconnect(g, id, exit) : connect(g, id, exit, target))),
    [change],
  )
  const clipboard = useClipboard(graph, change, canvasRef)
  const ariaLabels = useAriaLabels()
  const [panelOpen, setPanelOpen] = useState(true)

  // Fit the whole flow once every node has its size (React Flow's own initial fit can run earlier).
  const measured = useNodesInitialized()
  const fitted = useRef(false)
  useEffect(() => {
    if (!measured || fitted.current) return
    fitted.current = true
    void reactFlow.fitView(READABLE_FIT_VIEW)
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
      if (error instanceof StaleDraftError) {
        setConflict(error.currentDraftVersion)
        setStatus({ kind: 'error', text: t('status.conflict') })
        notify({ type: 'error', code: 'draft_conflict', message: error.message })
        return
      }
      if (error instanceof ApiError && error.status === 400 && error.problems.length > 0) {
        const index = indexProblems(sent, forPeople(sent, error.problems, t))
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

  /** Saves over the draft at `over` (by default the one this editor's changes are based on). */
  const save = useCallback(async (over = draftVersion.current): Promise<boolean> => {
    const sent = definition
    setBusy('saving')
    setStatus(undefined)
    try {
      const saved = await api.saveDraft(flow.id, sent, over)
      draftVersion.current = saved.draftVersion
      setConflict(undefined)
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

  const reloadTheirs = useCallback(async () => {
    setBusy('saving')
    try {
      onReload(await api.flow(flow.id))
    } catch (error) {
      failed(error, definition)
      setBusy(undefined)
    }
  }, [api, definition, failed, flow.id, onReload])

  /** A published version's definition becomes the draft's content, as an unsaved change. */
  const restore = useCallback(
    (version: number, restored: FlowDefinition) => {
      setBase(restored)
      change(() => typedKanbanValues(toGraph(restored), workspace.pipelines))
      setProblems(emptyProblems())
      setStatus({ kind: 'ok', text: t('status.restored', { version }) })
    },
    [change, t, workspace.pipelines],
  )

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
      setProblems(indexProblems(sent, forPeople(sent, result.problems, t)))
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
  const shownNodes = useMemo(() => markWaiting(graph.nodes, waitingAt), [graph.nodes, waitingAt])
  const edges = useMemo(() => graph.edges.map((e) => (problems.byEdge.has(e.id) ? { ...e, className: 'has-problems' } : e)), [graph.edges, problems])
  // React Flow wants a stable map: it changes only when a type the editor does not know appears.
  const unknownTypes = [...new Set(graph.nodes.map((n) => n.type ?? ''))].filter((type) => !isNodeType(type)).join('\u0000')
  const types = useMemo(
    () => (unknownTypes ? { ...nodeTypes, ...Object.fromEntries(unknownTypes.split('\u0000').map((type) => [type, UnknownNode])) } : nodeTypes),
    [unknownTypes],
  )

  return (
    <div className="editor">
      <SkipToPanel onOpen={() => setPanelOpen(true)} />
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
        <button type="button" className="secondary" onClick={() => void reactFlow.fitView({ ...READABLE_FIT_VIEW, duration: 200 })}>
          ⤢ {t('toolbar.fitView')}
        </button>
        <button type="button" className="secondary" onClick={() => void validate()} disabled={busy !== undefined}>
          ✓ {t('toolbar.validate')}
        </button>
        <button type="button" className="secondary" aria-pressed={testing} onClick={() => setTesting((open) => !open)} data-testid="test-toggle">
          ▷ {t('test.toggle')}
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
      {conflict !== undefined && <SaveConflict busy={busy !== undefined} onReloadTheirs={() => void reloadTheirs()} onOverwrite={() => void save(conflict)} />}
      <div className={`workspace${testing ? ' testing' : ''}`}>
        <Palette onAdd={(type) => addNode(type)} hasStart={graph.nodes.some((n) => n.type === 'start')} />
        <main className="canvas" ref={canvasRef} onDragOver={(e) => e.preventDefault()} onDrop={onDrop} aria-label={t('a11y.canvas')}>
          <ProblemsContext.Provider value={problems}>
            <ReactFlow
              nodes={shownNodes}
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
              ariaLabelConfig={ariaLabels}
            >
              <Background />
              <Controls showInteractive={false} fitViewOptions={READABLE_FIT_VIEW} />
              <MiniMap pannable zoomable />
            </ReactFlow>
          </ProblemsContext.Provider>
        </main>
        <aside className={panelOpen ? 'side-panel' : 'side-panel collapsed'} id={SIDE_PANEL} tabIndex={-1} aria-label={t('a11y.sidePanel')}>
          <button type="button" className="icon panel-toggle" aria-expanded={panelOpen} aria-controls={SIDE_PANEL} onClick={() => setPanelOpen(!panelOpen)} data-testid="panel-toggle">
            <span aria-hidden>{panelOpen ? '⟩' : '⟨'}</span>
            <span className="sr-only">{t(panelOpen ? 'a11y.hidePanel' : 'a11y.showPanel')}</span>
          </button>
          <nav className="tabs" role="tablist">
            <button type="button" role="tab" aria-selected={panel === 'node'} onClick={() => setPanel('node')}>
              {t('panel.properties')}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'variables'} onClick={() => setPanel('variables')} data-testid="tab-variables">
              {t('toolbar.variables')}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'problems'} onClick={() => setPanel('problems')} className={problems.all.length ? 'has-problems' : ''} data-testid="tab-problems">
              {t('toolbar.problems', { count: problems.all.length })}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'versions'} onClick={() => setPanel('versions')} data-testid="tab-versions">
              {t('toolbar.versions')}
            </button>
          </nav>
          <div className="panel-body">
            {panel === 'node' && <CanvasActions clipboard={clipboard} />}
            {panel === 'node' &&
              (selectedNode ? (
                <NodePanel
                  node={selectedNode}
                  problems={problems.byNode.get(selectedNode.id)}
                  onChange={(data) => updateNodeData(selectedNode.id, data)}
                  onRenameExit={(from, to) => renameNodeExit(selectedNode.id, from, to)}
                  onDelete={() => deleteNode(selectedNode.id)}
                >
                  <NextNodes node={selectedNode} graph={graph} onLink={(exit, target) => linkExit(selectedNode.id, exit, target)} />
                </NodePanel>
              ) : (
                <p className="hint">{selected.length > 1 ? t('panel.manySelected', { count: selected.length }) : t('panel.noSelection')}</p>
              ))}
            {panel === 'variables' && <VariablesPanel />}
            {panel === 'problems' && <ProblemsPanel problems={problems} onSelectNode={selectNode} />}
            {panel === 'versions' && <VersionsPanel api={api} flowId={flow.id} publishedVersion={publishedVersion} onRestore={restore} />}
          </div>
        </aside>
        <TestPanel api={api} flowId={flow.id} hidden={!testing} nodes={graph.nodes} draft={json} dirty={dirty} save={save} onWaitingAt={setWaitingAt} />
      </div>
    </div>
  )
}
