import { useCallback, useEffect, useId, useReducer, useRef, useState, type KeyboardEvent } from 'react'
import { errorText } from '../../shared/api-problems'
import type { ConversationTestBody, FlowApi, InboundMessage, OutsideEvent, VariableValue } from '../api'
import { SaveAsTest } from '../conversation-tests/SaveAsTest'
import type { FlowNode } from '../flow/model'
import { useExitLabel, useNodeName } from '../nodes'
import { useT } from '../i18n'
import { useWorkspace } from '../workspace'
import { Chat } from './Chat'
import { evolveConversation, newConversation, type Conversation, type ConversationEvent } from './conversation'
import { DebugView, type Naming } from './DebugView'
import { EventForm } from './EventForm'
import { TimerBar } from './TimerBar'
import { followEventStream } from '../../shared/event-stream'
import { useFollowOnCanvas } from './useFollowOnCanvas'
import { defaultTexts, startingValues, VariablesForm, type VariableTexts } from './VariablesForm'
import './test-panel.css'

export interface TestPanelProps {
  api: FlowApi
  flowId: string
  /** Shown or not; a hidden panel keeps its session. */
  hidden: boolean
  nodes: FlowNode[]
  /** The draft as the editor holds it (its JSON): the panel tells when it changed since the preview started. */
  draft: string
  dirty: boolean
  /** Saves the draft; false when it could not be saved. */
  save(): Promise<boolean>
  /** The node the preview waits at, for the canvas to mark; null when none. */
  onWaitingAt(nodeId: string | null): void
  /** Keeps the conversation tried as a test of the flow; throws the service's refusal. */
  onSaveTest(test: ConversationTestBody): Promise<void>
  /** Shows the flow's tests (the side panel's Tests tab). */
  onShowTests(): void
}

type PanelEvent = ConversationEvent | { type: 'reset'; variables: Record<string, VariableValue> }
const reduce = (state: Conversation, event: PanelEvent): Conversation => (event.type === 'reset' ? newConversation(event.variables) : evolveConversation(state, event))

type View = 'chat' | 'debug'
const VIEWS: View[] = ['chat', 'debug']

/**
 * The test panel: starts a preview session of the saved draft (saving unsaved changes first) with
 * the workspace's variables, shows its conversation and what the engine did in each turn, and
 * tells the canvas which node it waits at.
 */
export function TestPanel({ api, flowId, hidden, nodes, draft, dirty, save, onWaitingAt, onSaveTest, onShowTests }: TestPanelProps) {
  const t = useT()
  const nodeName = useNodeName(nodes)
  const exitLabel = useExitLabel()
  const { variables } = useWorkspace()
  const [texts, setTexts] = useState<VariableTexts>(() => defaultTexts(variables))
  const [run, setRun] = useState<{ sessionId: string; draft: string }>()
  const [starting, setStarting] = useState(false)
  const [notice, setNotice] = useState<string>()
  const [reconnecting, setReconnecting] = useState(false)
  const [refused, setRefused] = useState<Record<string, string>>({})
  const [view, setView] = useState<View>('chat')
  const [conversation, dispatch] = useReducer(reduce, {}, newConversation)
  // "Save as test": the conversation read as a test, while the person edits it; then the name it was saved as.
  const [reading, setReading] = useState(false)
  const [recorded, setRecorded] = useState<ConversationTestBody>()
  const [savedAs, setSavedAs] = useState<string>()
  const saveAsButton = useRef<HTMLButtonElement>(null)
  const following = useRef<AbortController>(undefined)
  const sent = useRef(0)
  const ids = useId()

  // Variables created while the panel is open start with their defaults too.
  useEffect(() => {
    setTexts((current) => ({ ...defaultTexts(variables.filter((v) => !(v.name in current))), ...current }))
  }, [variables])

  const stop = useCallback(() => {
    following.current?.abort()
    following.current = undefined
  }, [])
  useEffect(() => stop, [stop])

  const waitingAt = run ? conversation.waitingAt : null
  useEffect(() => onWaitingAt(hidden ? null : waitingAt), [hidden, waitingAt, onWaitingAt])
  useFollowOnCanvas(hidden, waitingAt)
  useEffect(() => () => onWaitingAt(null), [onWaitingAt])
  // The canvas labels the node the preview waits at (test-panel.css), in the editor's language.
  useEffect(() => document.documentElement.style.setProperty('--test-waiting-label', JSON.stringify(t('test.waitingHere'))), [t])

  const start = async () => {
    const values = startingValues(variables, texts)
    if (!values) return
    stop()
    setStarting(true)
    setNotice(undefined)
    setRecorded(undefined)
    setSavedAs(undefined)
    const startedWith = draft
    try {
      if (dirty && !(await save())) setNotice(t('test.saveFailed'))
      const { sessionId } = await api.startPreview(flowId, values)
      const controller = new AbortController()
      following.current = controller
      dispatch({ type: 'reset', variables: values })
      setRun({ sessionId, draft: startedWith })
      setReconnecting(false)
      void followEventStream((lastEventId, signal) => api.streamSession(sessionId, lastEventId, signal), controller.signal, {
        onEvent: (event) => {
          if (controller.signal.aborted) return
          setReconnecting(false)
          dispatch({ type: 'streamed', event })
        },
        onReconnecting: () => {
          if (controller.signal.aborted) return
          setReconnecting(true)
          dispatch({ type: 'reconnecting' })
        },
        onStopped: (refusal) => {
          if (refusal && !controller.signal.aborted) setNotice(t('test.streamStopped', { message: errorText(refusal, t) }))
        },
      })
    } catch (error) {
      setNotice(t('test.startFailed', { message: errorText(error, t) }))
    } finally {
      setStarting(false)
    }
  }

  const send = async (message: InboundMessage) => {
    if (!run) return
    const key = `sent-${++sent.current}`
    dispatch({ type: 'sent', key, message })
    try {
      await api.sendMessage(run.sessionId, message)
    } catch (error) {
      // The conversation shows it as not sent, with why, where the person looks.
      setRefused((all) => ({ ...all, [key]: errorText(error, t) }))
    }
  }

  const postEvent = async (event: OutsideEvent): Promise<string | undefined> => {
    if (!run) return undefined
    try {
      await api.postEvent(run.sessionId, event)
      dispatch({ type: 'posted', key: `event-${++sent.current}`, name: event.name })
      return undefined
    } catch (error) {
      return errorText(error, t)
    }
  }

  const fireTimer = async (): Promise<string | undefined> => {
    if (!run) return undefined
    try {
      await api.fireTimer(run.sessionId)
      return undefined
    } catch (error) {
      return errorText(error, t)
    }
  }

  const readAsTest = async () => {
    if (!run) return
    setReading(true)
    setNotice(undefined)
    setSavedAs(undefined)
    try {
      setRecorded(await api.sessionAsTest(run.sessionId))
    } catch (error) {
      setNotice(t('tests.save.readFailed', { message: errorText(error, t) }))
    } finally {
      setReading(false)
    }
  }
  const closeRecorded = () => {
    setRecorded(undefined)
    requestAnimationFrame(() => saveAsButton.current?.focus())
  }

  const editVariables = () => {
    stop()
    setRun(undefined)
    setNotice(undefined)
    setRecorded(undefined)
    setSavedAs(undefined)
    dispatch({ type: 'reset', variables: {} })
  }

  const naming: Naming = {
    nodeName,
    nodeType: (id) => nodes.find((n) => n.id === id)?.type,
    exitName: (nodeId, exit) => {
      const node = nodes.find((n) => n.id === nodeId)
      return node ? exitLabel(node, { id: exit }) : exit
    },
  }
  // A preview waiting at a waitForEvent node takes the event from here, as the customer's system would post it.
  const waitingNode = run && conversation.status === 'active' ? nodes.find((n) => n.id === conversation.waitingAt) : undefined
  const waitsFor = waitingNode?.type === 'waitForEvent' && typeof waitingNode.data.event === 'string' ? waitingNode.data.event : undefined
  const timer = run && conversation.status === 'active' ? conversation.timer : null

  const onTabKey = (event: KeyboardEvent) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
    if (!step) return
    event.preventDefault()
    const next = VIEWS[(VIEWS.indexOf(view) + step + VIEWS.length) % VIEWS.length]!
    setView(next)
    document.getElementById(`${ids}-tab-${next}`)?.focus()
  }

  return (
    <aside className="test-panel" hidden={hidden} aria-labelledby={`${ids}-title`} data-testid="test-panel">
      <header className="test-header">
        <h2 id={`${ids}-title`}>{t('test.title')}</h2>
        {run && (
          <div className="test-actions">
            <button type="button" className="primary" onClick={() => void start()} disabled={starting} data-testid="test-restart">
              ↻ {starting ? t('test.starting') : t('test.restart')}
            </button>
            <button type="button" className="secondary" onClick={editVariables} disabled={starting}>
              {t('test.editVariables')}
            </button>
            <button type="button" className="secondary" ref={saveAsButton} onClick={() => void readAsTest()} disabled={starting || reading || recorded !== undefined} data-testid="test-save-as">
              {reading ? t('tests.save.reading') : t('tests.save')}
            </button>
          </div>
        )}
      </header>
      {notice && (
        <p className="test-notice error" role="alert">
          {notice}
        </p>
      )}
      {run && run.draft !== draft && (
        <p className="test-notice" role="status" data-testid="test-draft-changed">
          {t('test.draftChanged')}
        </p>
      )}
      {savedAs !== undefined && (
        <p className="test-notice saved" role="status" data-testid="test-saved">
          {t('tests.save.saved', { name: savedAs })}{' '}
          <button type="button" className="link" autoFocus onClick={onShowTests}>
            {t('tests.save.show')}
          </button>
        </p>
      )}
      {reconnecting && (
        <p className="test-notice" role="status">
          {t('test.reconnecting')}
        </p>
      )}
      {!run ? (
        <div className="test-setup">
          <p className="hint">{t('test.intro')}</p>
          <VariablesForm variables={variables} texts={texts} onChange={setTexts} onStart={() => void start()} starting={starting} />
        </div>
      ) : recorded ? (
        <SaveAsTest
          recorded={recorded}
          onSave={onSaveTest}
          onSaved={(name) => {
            setRecorded(undefined)
            setSavedAs(name)
          }}
          onCancel={closeRecorded}
        />
      ) : (
        <>
          <p className="test-waiting-at" data-testid="test-waiting-at">
            {conversation.waitingAt ? t('test.waitingAt', { node: nodeName(conversation.waitingAt) }) : '\u00a0'}
          </p>
          {timer && <TimerBar key={`${timer.nodeId}-${timer.dueAt}`} timer={timer} nodeName={nodeName(timer.nodeId)} onFire={fireTimer} />}
          {waitsFor !== undefined && <EventForm key={`${conversation.waitingAt}-${conversation.turns.length}`} waitsFor={waitsFor} onPost={postEvent} />}
          <div className="tabs" role="tablist" aria-label={t('test.views')}>
            {VIEWS.map((v) => (
              <button
                key={v}
                type="button"
                role="tab"
                id={`${ids}-tab-${v}`}
                aria-selected={view === v}
                aria-controls={`${ids}-view-${v}`}
                tabIndex={view === v ? 0 : -1}
                onClick={() => setView(v)}
                onKeyDown={onTabKey}
                data-testid={`test-tab-${v}`}
              >
                {t(`test.${v}`)}
              </button>
            ))}
          </div>
          <div className="test-view" role="tabpanel" id={`${ids}-view-${view}`} aria-labelledby={`${ids}-tab-${view}`}>
            {view === 'chat' ? (
              <Chat entries={conversation.chat} writing={conversation.writing} open={conversation.status === 'active'} refused={refused} onSend={(message) => void send(message)} />
            ) : (
              <DebugView conversation={conversation} naming={naming} />
            )}
          </div>
        </>
      )}
    </aside>
  )
}
