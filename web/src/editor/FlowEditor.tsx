import { ReactFlowProvider } from '@xyflow/react'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { SIDE_PANEL, SkipToPanel } from './a11y'
import type { FlowApi, FlowDetail } from './api'
import { useReadableFit } from './canvas/fit-view'
import { FlowCanvas } from './canvas/FlowCanvas'
import { Palette } from './canvas/Palette'
import { TestsPanel } from './conversation-tests/TestsPanel'
import { useConversationTests } from './conversation-tests/useConversationTests'
import { SaveConflict } from './dialogs/SaveConflict'
import { useDraft } from './flow/useDraft'
import { useFlowGraph } from './flow/useFlowGraph'
import { useT } from './i18n'
import { useNodeName } from './nodes'
import { CanvasActions } from './panels/CanvasActions'
import { NextNodes } from './panels/NextNodes'
import { NodePanel } from './panels/NodePanel'
import { ProblemsPanel } from './panels/ProblemsPanel'
import { VariablesPanel } from './panels/VariablesPanel'
import { VersionsPanel } from './panels/VersionsPanel'
import type { EditorMessage } from './protocol'
import type { Theme } from './route'
import { markWaiting } from './test-panel/highlight'
import { TestPanel } from './test-panel/TestPanel'

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

type Panel = 'node' | 'variables' | 'problems' | 'versions' | 'tests'

/** Below this width the test panel takes the side panel's place, which opens as a drawer over the canvas (styles.css). */
const NARROW = '(max-width: 1279px)'

/** The editor's layout: toolbar, palette, canvas, side panel and test panel, over the flow's graph and draft. */
function Editor({ flow, api, theme, notify, reloaded, onReload }: EditorProps) {
  const t = useT()
  const fit = useReadableFit()
  const canvasRef = useRef<HTMLElement>(null)
  const flowGraph = useFlowGraph(flow.definition, canvasRef)
  const draft = useDraft({ flow, api, notify, reloaded, onReload }, flowGraph)
  const { graph, problems } = flowGraph
  const [panel, setPanel] = useState<Panel>('node')
  const [panelOpen, setPanelOpen] = useState(true)
  const [testing, setTesting] = useState(false)
  const foldedForTest = useRef(false)
  const [waitingAt, setWaitingAt] = useState<string | null>(null)
  const tests = useConversationTests(api, flow.id, draft)
  const nodeName = useNodeName(graph.nodes)

  const addNode: typeof flowGraph.addNode = (type, at) => {
    flowGraph.addNode(type, at)
    setPanel('node')
  }
  const selectNode = (id: string) => {
    flowGraph.selectNode(id)
    setPanel('node')
  }
  const showTests = () => {
    setPanel('tests')
    setPanelOpen(true)
  }
  // A publish the flow's tests refused marks them failing on the draft it sent.
  const publish = async () => {
    const sent = draft.json
    const failing = await draft.publish()
    if (failing) tests.markFailing(failing, sent)
  }
  const showFailingTests = () => {
    showTests()
    void tests.run()
  }
  const validate = async () => {
    if ((await draft.validate()) === 'invalid') setPanel('problems')
  }
  // The view fits the arranged flow once the canvas has its new positions (the effect below).
  const [arranged, setArranged] = useState(0)
  const arrange = () => void flowGraph.arrange().then(() => setArranged((n) => n + 1))
  useEffect(() => {
    if (arranged) void fit(200)
  }, [arranged, fit])
  // In a narrow frame the test panel needs the side panel's room: it folds while the test panel is open.
  const toggleTest = () => {
    const opening = !testing
    setTesting(opening)
    if (opening && panelOpen && window.matchMedia(NARROW).matches) {
      foldedForTest.current = true
      setPanelOpen(false)
    } else if (!opening && foldedForTest.current) {
      foldedForTest.current = false
      setPanelOpen(true)
    }
  }

  const selected = graph.nodes.filter((n) => n.selected)
  const selectedNode = selected.length === 1 ? selected[0] : undefined
  const shownNodes = useMemo(() => markWaiting(graph.nodes, waitingAt), [graph.nodes, waitingAt])

  return (
    <div className="editor">
      <SkipToPanel onOpen={() => setPanelOpen(true)} />
      <header className="toolbar">
        <h1 title={flow.name}>{flow.name}</h1>
        <span className={`save-state ${draft.dirty ? 'dirty' : 'clean'}`} data-testid="save-state">
          {draft.dirty ? `● ${t('status.unsaved')}` : t('status.saved')}
        </span>
        <span className="muted" data-testid="published-version">
          {draft.release.liveVersion === draft.publishedVersion ? t('status.published', { version: draft.publishedVersion }) : t('status.live', { version: draft.release.liveVersion })}
        </span>
        <span className="spacer" />
        <button type="button" className="secondary" onClick={flowGraph.undo} disabled={!flowGraph.canUndo} title={`${t('toolbar.undo')} (Ctrl+Z)`}>
          <span aria-hidden>↶</span>
          <span className="toolbar-label short">{t('toolbar.undo')}</span>
        </button>
        <button type="button" className="secondary" onClick={flowGraph.redo} disabled={!flowGraph.canRedo} title={`${t('toolbar.redo')} (Ctrl+Shift+Z)`}>
          <span aria-hidden>↷</span>
          <span className="toolbar-label short">{t('toolbar.redo')}</span>
        </button>
        <button type="button" className="secondary" onClick={() => void fit(200)} title={t('toolbar.fitView')}>
          <span aria-hidden>⤢</span>
          <span className="toolbar-label short">{t('toolbar.fitView')}</span>
        </button>
        <button type="button" className="secondary" onClick={arrange} title={t('toolbar.arrangeHint')} data-testid="arrange">
          <span aria-hidden>⇉</span>
          <span className="toolbar-label">{t('toolbar.arrange')}</span>
        </button>
        <button type="button" className="secondary" onClick={() => void validate()} disabled={draft.busy !== undefined}>
          ✓ {t('toolbar.validate')}
        </button>
        <button type="button" className="secondary" aria-pressed={testing} onClick={toggleTest} data-testid="test-toggle">
          ▷ {t('test.toggle')}
        </button>
        <button type="button" onClick={() => void draft.save()} disabled={draft.busy !== undefined || !draft.dirty} data-testid="save">
          {draft.busy === 'saving' ? t('toolbar.saving') : t('toolbar.save')}
        </button>
        <button
          type="button"
          className={draft.publishable ? 'primary' : 'secondary'}
          onClick={() => void publish()}
          disabled={draft.busy !== undefined || !draft.publishable}
          title={draft.publishable ? undefined : t('toolbar.nothingToPublish', { version: draft.publishedVersion })}
          data-testid="publish"
        >
          {draft.busy === 'publishing' ? t('toolbar.publishing') : t('toolbar.publish')}
        </button>
      </header>
      {draft.status && (
        <div className={`status ${draft.status.kind}`} role="status" data-testid="status">
          <span>{draft.status.text}</span>
          {draft.status.failingTests && (
            <button type="button" className="secondary status-action" onClick={showFailingTests} data-testid="show-failing-tests">
              {t('status.showFailingTests')}
            </button>
          )}
          <button type="button" className="icon" aria-label={t('panel.close')} onClick={draft.dismissStatus}>
            ×
          </button>
        </div>
      )}
      {draft.conflict !== undefined && (
        <SaveConflict busy={draft.busy !== undefined} onReloadTheirs={() => void draft.reloadTheirs()} onOverwrite={() => void draft.save(draft.conflict)} />
      )}
      <div className={`workspace${testing ? ' testing' : ''}`}>
        <Palette onAdd={(type) => addNode(type)} hasStart={graph.nodes.some((n) => n.type === 'start')} />
        <FlowCanvas canvasRef={canvasRef} nodes={shownNodes} edges={graph.edges} problems={problems} handlers={flowGraph.canvas} theme={theme} onDropNode={addNode} />
        <aside className={panelOpen ? 'side-panel' : 'side-panel collapsed'} id={SIDE_PANEL} tabIndex={-1} aria-label={t('a11y.sidePanel')}>
          <button
            type="button"
            className="icon panel-toggle"
            aria-expanded={panelOpen}
            aria-controls={SIDE_PANEL}
            onClick={() => {
              foldedForTest.current = false
              setPanelOpen(!panelOpen)
            }}
            data-testid="panel-toggle"
          >
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
              {t('toolbar.problems')}
              {problems.all.length > 0 && <span className="tab-count">{problems.all.length}</span>}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'versions'} onClick={() => setPanel('versions')} data-testid="tab-versions">
              {t('toolbar.versions')}
            </button>
            <button type="button" role="tab" aria-selected={panel === 'tests'} onClick={() => setPanel('tests')} data-testid="tab-tests">
              {t('tests.tab')}
            </button>
          </nav>
          <div className="panel-body">
            {panel === 'node' && <CanvasActions clipboard={flowGraph.clipboard} />}
            {panel === 'node' &&
              (selectedNode ? (
                <NodePanel
                  node={selectedNode}
                  problems={problems.byNode.get(selectedNode.id)}
                  onChange={(data) => flowGraph.updateNodeData(selectedNode.id, data)}
                  onRenameExit={(from, to) => flowGraph.renameNodeExit(selectedNode.id, from, to)}
                  onDelete={() => flowGraph.deleteNode(selectedNode.id)}
                >
                  <NextNodes node={selectedNode} graph={graph} onLink={(exit, target) => flowGraph.linkExit(selectedNode.id, exit, target)} />
                </NodePanel>
              ) : (
                <p className="hint">{selected.length > 1 ? t('panel.manySelected', { count: selected.length }) : t('panel.noSelection')}</p>
              ))}
            {panel === 'variables' && <VariablesPanel />}
            {panel === 'problems' && <ProblemsPanel problems={problems} onSelectNode={selectNode} />}
            {panel === 'versions' && (
              <VersionsPanel
                api={api}
                flowId={flow.id}
                publishedVersion={draft.publishedVersion}
                release={draft.release}
                onRestore={draft.restore}
                onRollBack={draft.rollBack}
                onRefresh={draft.refreshRelease}
              />
            )}
            {panel === 'tests' && (
              <TestsPanel
                tests={tests}
                draft={draft.json}
                nodeName={nodeName}
                requirePassing={flowGraph.definition.settings?.requirePassingTests === true}
                onRequirePassing={(on) => flowGraph.setSetting('requirePassingTests', on || undefined)}
              />
            )}
          </div>
        </aside>
        <TestPanel api={api} flowId={flow.id} hidden={!testing} nodes={graph.nodes} draft={draft.json} dirty={draft.dirty} save={draft.save} onWaitingAt={setWaitingAt} onSaveTest={tests.create} onShowTests={showTests} />
      </div>
    </div>
  )
}
