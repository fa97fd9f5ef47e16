import { TypeCompiler } from '@sinclair/typebox/compiler'
import { OutgoingMessage, type FlowDefinition } from '../domain/flow-definition.js'
import { interpolator, type Scope } from '../domain/interpolate.js'
import { interpolateMessage } from './messages.js'
import { nodeTypeOf, nodeTypes, type NodeTypes, type TypedNode } from '../domain/nodes/index.js'
import type { FinishReason, Step, SubflowRef, Visit, Wake } from '../domain/nodes/node-type.js'
import { DONE_HANDLE, MAX_SUBFLOW_DEPTH } from '../domain/nodes/run-flow.js'
import { readsToday } from '../domain/nodes/ai.js'
import { EVENTS_KEPT, MESSAGES_HELD, extendedTranscript, type Choice, type ConversationState, type InboundMessage, type OutsideEvent, type Trigger, type Subflow, type Subflows, subflowKey, type TurnContext, type TurnOutput, type VariableValue } from '../domain/turn.js'
import { CALL_LIMITS, type CallNeeded, type HttpCallRequest, type RecordedCall } from '../domain/outside-call.js'
import type { InterpolationOptions } from '../domain/interpolate.js'
import { calendarDateAt } from '../domain/calendar-date.js'

export const MAX_NODES_PER_TURN = 100

/**
 * A flow definition that passed validation: each node's `data` matches its type's schema; for a
 * session whose flow has runFlow nodes, with the flows they run (`subflows`, loaded by the engine).
 */
export type RunnableFlow = Omit<FlowDefinition, 'nodes'> & { nodes: TypedNode[]; subflows?: Subflows }

/** How a turn ends: as the output says, or suspended until the engine has made a call. */
type Status = TurnOutput['status'] | 'suspended'

/** The nodes and edges a turn walks: the session's flow, or a sub-flow it runs. */
interface Walked {
  nodes: ReadonlyMap<string, TypedNode>
  edges: RunnableFlow['edges']
}

/** A turn in progress. It owns copies of everything it changes, so runTurn stays pure. */
interface Turn {
  /** The session's own flow. */
  flow: RunnableFlow
  types: NodeTypes
  /** Where the conversation is: the innermost flow of `state.frames`, else the session's. */
  here: Walked
  context: TurnContext
  state: ConversationState
  out: Omit<TurnOutput, 'status' | 'state'>
  /** Calls outside asked for so far; the recorded ones are in `context.calls`. */
  calls: number
  /** The call the turn waits for, once it suspends. */
  needed?: CallNeeded
  /** What the user said in the trigger, for the transcript AI steps read. */
  trigger: Trigger
}

/** The state of a conversation that has not started yet, holding the session's initial variables. */
export const initialConversation = (variables: Record<string, VariableValue> = {}): ConversationState => ({
  waitingAt: null,
  variables: structuredClone(variables),
  lastTimestampMicros: 0,
  card: null,
})

/** Every node a session of the flow may walk: its own and its sub-flows'. */
const nodesWalked = (flow: RunnableFlow): TypedNode[] =>
  [flow, ...[...(flow.subflows?.values() ?? [])].filter((subflow) => typeof subflow === 'object')].flatMap((walkedFlow) => walkedFlow.nodes)

/**
 * Whether a turn of the flow may read `context.timeZone`: only a `date` question and an AI step
 * extracting a date do. The engine loads the workspace's zone, and records it with the turn, for
 * such flows alone.
 */
export const readsTimeZone = (flow: RunnableFlow): boolean =>
  nodesWalked(flow).some((node) => (node.type === 'question' && node.data.input.kind === 'date') || (node.type === 'ai' && readsToday(node.data)))

/** The AI connections the flow's AI steps call, which the engine loads, and records with the turn, for the flows that have some. */
export const aiConnectionsCalled = (flow: RunnableFlow): string[] => [...new Set(nodesWalked(flow).flatMap((node) => (node.type === 'ai' ? [node.data.connectionId] : [])))]

/**
 * Runs one turn of a conversation: from the start node (trigger `start`) or from the question the
 * conversation waits at (trigger `message`), until it waits for a reply, completes or fails. Pure:
 * time, ids and chance come from `context`, and neither `state` nor `flow` is modified.
 */
export const runTurnOrCall = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext, types: NodeTypes = nodeTypes): TurnOutput | CallNeeded => {
  const turn = beginTurn(flow, state, trigger, context, types)
  const status = guarded(turn, () => answerHeld(turn, triggered(turn, trigger)))
  if (status === 'suspended') return turn.needed!
  if (status !== 'active') {
    turn.state.waitingAt = null
    delete turn.state.frames
  }
  // The calls made are the recorded ones; a call a limit refused was not made.
  const made = context.calls?.length ?? 0
  if (made > 0) turn.state.callsMade = (turn.state.callsMade ?? 0) + made
  return { ...turn.out, status, state: turn.state }
}

/**
 * A turn that makes no call outside, or whose calls are all in `context.calls`: what tests and
 * tools that have no engine to make calls run.
 */
export const runTurn = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext, types: NodeTypes = nodeTypes): TurnOutput => {
  const output = runTurnOrCall(flow, state, trigger, context, types)
  if (output.status === 'calling') throw new Error(`the turn needs a call of node ${output.nodeId} that is not recorded`)
  return output
}

const beginTurn = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext, types: NodeTypes): Turn => {
  const turn: Turn = {
    trigger,
    flow,
    types,
    here: walked(flow),
    context,
    state: structuredClone(state),
    out: { messages: [], functions: [], kanban: [], variables: {}, warnings: [], visited: [] },
    calls: 0,
  }
  turn.here = innermost(turn)
  if (state.frames?.length) noteFlowWalked(turn)
  return turn
}

/** Records that the nodes visited from now on are of the flow walked now (`TurnOutput.flowsVisited`). */
const noteFlowWalked = (turn: Turn): void => {
  const inner = turn.state.frames?.at(-1)
  ;(turn.out.flowsVisited ??= []).push({ from: turn.out.visited.length, flow: inner ? { flowId: inner.flowId, version: inner.version } : null })
}

const subflowOf = (turn: Turn, ref: SubflowRef): Subflow | string => turn.flow.subflows?.get(subflowKey(ref)) ?? `flow ${ref.flowId} was not loaded for this turn`

/** The flow of the innermost frame, else the session's. */
const innermost = (turn: Turn): Walked => {
  const inner = turn.state.frames?.at(-1)
  if (!inner) return walked(turn.flow)
  const subflow = subflowOf(turn, { flowId: inner.flowId, version: inner.version })
  // A published version never changes: the engine finds a frame's flow again. Should it not, the
  // flow has no nodes, and the turn ends in error at the node it looks for.
  return typeof subflow === 'object' ? walked(subflow) : walked({ nodes: [], edges: [] })
}

const walked = (flow: { nodes: readonly TypedNode[]; edges: RunnableFlow['edges'] }): Walked => ({ nodes: new Map(flow.nodes.map((node) => [node.id, node])), edges: flow.edges })

// A flow that slipped past validation may hold data the types do not describe; it fails the
// session instead of the worker.
const guarded = (turn: Turn, run: () => Status): Status => {
  try {
    return run()
  } catch (error) {
    const at = turn.out.visited.at(-1) ?? '(none)'
    return fail(turn, `engine failure in node ${at}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const triggered = (turn: Turn, trigger: Trigger): Status => {
  switch (trigger.type) {
    case 'start':
      return start(turn)
    case 'message':
      return reply(turn, trigger.message)
    case 'event':
      return outsideEvent(turn, trigger.event)
    case 'timer':
      return timer(turn, trigger.nodeId, trigger.until)
  }
}

const start = (turn: Turn): Status => {
  turn.state.waitingAt = null
  return walkFromStart(turn, 'the flow')
}

const walkFromStart = (turn: Turn, which: string): Status => {
  const startNode = [...turn.here.nodes.values()].find((node) => node.type === 'start')
  if (!startNode) return fail(turn, `broken reference: ${which} has no start node`)
  return walk(turn, startNode.id)
}

const reply = (turn: Turn, message: InboundMessage): Status => {
  const waiting = turn.state.waitingAt
  if (!waiting) {
    turn.out.warnings.push('message ignored: the conversation is not waiting for a reply')
    return 'completed'
  }
  if (waiting.event !== undefined) {
    turn.out.warnings.push(`message not answered: the conversation waits at ${waiting.nodeId} for the event ${waiting.event}`)
    return 'active'
  }
  // Behind messages already held, a message waits its turn, so replies are answered in the order they came.
  if (holdsReplies(turn, waiting.nodeId) || (turn.state.held?.length ?? 0) > 0) {
    hold(turn, message)
    return 'active'
  }
  return answer(turn, message)
}

const answer = (turn: Turn, message: InboundMessage): Status => {
  const waiting = turn.state.waitingAt!
  const node = turn.here.nodes.get(waiting.nodeId)
  const resume = node && nodeTypeOf(turn.types, node.type)?.resume
  if (!node || !resume) return fail(turn, `broken reference: waiting at ${waiting.nodeId}, which is not a question of this flow`)
  turn.out.visited.push(node.id)
  const step = resume(node, visiting(turn, node.id), waiting.retries, message)
  return stepped(turn, node.id, step)
}

const holdsReplies = (turn: Turn, nodeId: string): boolean => {
  const node = turn.here.nodes.get(nodeId)
  return node !== undefined && nodeTypeOf(turn.types, node.type)?.holdsReplies === true
}

/** Keeps a message for later (a delay holds them), the oldest dropped past MESSAGES_HELD with a warning. */
const hold = (turn: Turn, message: InboundMessage): void => {
  const held = [...(turn.state.held ?? []), message]
  const dropped = held.splice(0, Math.max(0, held.length - MESSAGES_HELD))
  if (dropped.length > 0) turn.out.warnings.push(`${dropped.length} held message(s) dropped: a session holds at most ${MESSAGES_HELD} messages during a delay`)
  turn.state.held = held
}

/**
 * Answers the messages held during a delay, oldest first, while the conversation waits at a node
 * that takes replies; those left when the conversation ends are not answered (with a warning).
 */
const answerHeld = (turn: Turn, status: Status): Status => {
  for (;;) {
    const held = turn.state.held ?? []
    if (held.length === 0) return status
    const waiting = turn.state.waitingAt
    if (status !== 'active' || !waiting) {
      if (status !== 'suspended') {
        turn.out.warnings.push(`${held.length} held message(s) not answered: the conversation ended`)
        delete turn.state.held
      }
      return status
    }
    if (waiting.event !== undefined || holdsReplies(turn, waiting.nodeId)) return status
    const [next, ...rest] = held
    if (rest.length > 0) turn.state.held = rest
    else delete turn.state.held
    status = answer(turn, next!)
  }
}

/**
 * An outside event: it wakes the node waiting for its name, or is kept (the oldest dropped past
 * EVENTS_KEPT, with a warning) for the next node that waits for it.
 */
const outsideEvent = (turn: Turn, event: OutsideEvent): Status => {
  const waiting = turn.state.waitingAt
  if (waiting?.event === event.name) return wake(turn, waiting.nodeId, { type: 'event', ...event })
  const inbox = [...(turn.state.inbox ?? []), { eventId: turn.context.newId(), ...event }]
  const dropped = inbox.splice(0, Math.max(0, inbox.length - EVENTS_KEPT))
  for (const old of dropped) turn.out.warnings.push(`event ${old.name} dropped: a session keeps at most ${EVENTS_KEPT} events no node waited for`)
  turn.state.inbox = inbox
  return waiting ? 'active' : 'completed'
}

/** A wait's timer: it ends the wait it was set for (or sends its next reminder), and nothing once that wait is over. */
const timer = (turn: Turn, nodeId: string, until: string): Status => {
  const waiting = turn.state.waitingAt
  if (waiting?.nodeId === nodeId && waiting.until === until) {
    return wake(turn, nodeId, { type: 'timer', until, retries: waiting.retries, reminded: waiting.reminded ?? 0 })
  }
  return waiting ? 'active' : 'completed'
}

const wake = (turn: Turn, nodeId: string, how: Wake): Status => {
  const node = turn.here.nodes.get(nodeId)
  const wakeNode = node && nodeTypeOf(turn.types, node.type)?.wake
  if (!node || !wakeNode) return fail(turn, `broken reference: waiting at ${nodeId}, which does not wait for events in this flow`)
  turn.out.visited.push(node.id)
  return stepped(turn, node.id, wakeNode(node, visiting(turn, node.id), how))
}

const walk = (turn: Turn, nodeId: string): Status => {
  if (turn.out.visited.length >= MAX_NODES_PER_TURN) return fail(turn, `loop limit: more than ${MAX_NODES_PER_TURN} nodes in one turn`)
  const node = turn.here.nodes.get(nodeId)
  if (!node) return fail(turn, `broken reference: node ${nodeId} does not exist`)
  turn.out.visited.push(node.id)
  return stepped(turn, node.id, visit(turn, node))
}

const stepped = (turn: Turn, nodeId: string, step: Step): Status => {
  if (step === 'wait') return 'active'
  if (step === 'end') return endFlow(turn)
  if (step === 'complete') return 'completed'
  if (step === 'suspend') return 'suspended'
  if ('enter' in step) return enterFlow(turn, nodeId, step.enter)
  return leave(turn, nodeId, step.exit, step.unhandled, step.finishReason)
}

/**
 * A runFlow node runs its flow: a frame is pushed and the flow walked from its start. A flow that
 * is running already (a cycle), one past the depth limit, or one that cannot run ends the session
 * in error: sub-flows are checked at publish time, and here always.
 */
const enterFlow = (turn: Turn, nodeId: string, ref: SubflowRef): Status => {
  const frames = turn.state.frames ?? []
  const running = [turn.context.system.flowId, ...frames.map((frame) => frame.flowId)]
  if (running.includes(ref.flowId)) return fail(turn, `runFlow ${nodeId}: flow ${ref.flowId} is running already; sub-flows cannot run in a circle`)
  if (frames.length >= MAX_SUBFLOW_DEPTH) return fail(turn, `runFlow ${nodeId}: sub-flows nest at most ${MAX_SUBFLOW_DEPTH} deep`)
  const subflow = subflowOf(turn, ref)
  if (typeof subflow === 'string') return fail(turn, `runFlow ${nodeId}: ${subflow}`)
  turn.state.frames = [...frames, { nodeId, flowId: ref.flowId, version: subflow.version }]
  turn.here = walked(subflow)
  noteFlowWalked(turn)
  return walkFromStart(turn, `flow ${ref.flowId}`)
}

/** The flow walked ends: a sub-flow returns to its runFlow node's `done` exit; the session's own flow finishes it. */
const endFlow = (turn: Turn, reason?: FinishReason): Status => {
  const frames = turn.state.frames ?? []
  const caller = frames.at(-1)
  if (!caller) {
    finish(turn, reason)
    return 'completed'
  }
  const outer = frames.slice(0, -1)
  if (outer.length > 0) turn.state.frames = outer
  else delete turn.state.frames
  turn.here = innermost(turn)
  noteFlowWalked(turn)
  return leave(turn, caller.nodeId, DONE_HANDLE)
}

/**
 * Follows a node's exit; an exit with no edge ends the session as an end node would, or in error
 * when the node said why it cannot end well (`unhandled`).
 */
const leave = (turn: Turn, nodeId: string, handle: string | null, unhandled?: string, finishReason?: FinishReason): Status => {
  const edge = turn.here.edges.find((candidate) => candidate.source === nodeId && (candidate.sourceHandle ?? null) === handle)
  if (edge) return walk(turn, edge.target)
  if (unhandled !== undefined) return fail(turn, unhandled)
  return endFlow(turn, finishReason)
}

/** The node's type runs it, through a visit of this turn. */
const visit = (turn: Turn, node: TypedNode): Step => {
  const type = nodeTypeOf(turn.types, node.type)
  if (!type) throw new Error(`unknown node type in ${JSON.stringify(node)}`)
  return type.run(node, visiting(turn, node.id))
}

const visiting = (turn: Turn, nodeId: string): Visit => ({
  nodeId,
  scope: () => scope(turn),
  send: (messages) => send(turn, nodeId, messages),
  sendAsWritten: (messages) => send(turn, nodeId, messages, false),
  interpolating: (use, options) => interpolating(turn, nodeId, use, options),
  assign: (name, value) => assign(turn, name, value),
  warn: (warning) => turn.out.warnings.push(warning),
  wait: (retries, timer) => {
    turn.state.waitingAt = {
      nodeId,
      retries,
      ...(timer && { until: new Date(timer.until).toISOString() }),
      ...(timer?.reminded !== undefined && { reminded: timer.reminded }),
    }
  },
  stopWaiting: () => {
    turn.state.waitingAt = null
  },
  waitForEvent: (name, timeoutSeconds) => {
    const until = new Date(nowMillis(turn) + timeoutSeconds * 1000).toISOString()
    turn.state.waitingAt = { nodeId, retries: 0, event: name, until }
  },
  takeEvent: (name) => {
    const inbox = turn.state.inbox ?? []
    const index = inbox.findIndex((kept) => kept.name === name)
    if (index < 0) return undefined
    const [taken] = inbox.splice(index, 1)
    turn.state.inbox = inbox
    return { data: taken!.data }
  },
  call: (fn) => turn.out.functions.push({ ...fn, timestamp: nextTimestamp(turn) }),
  moveCard: (action) => {
    turn.out.kanban.push({ ...action, timestamp: nextTimestamp(turn), nodeId })
    turn.state.card = { cardId: action.cardId, pipelineId: action.pipelineId, stageId: action.stageId }
  },
  get card() {
    return turn.state.card
  },
  newId: () => turn.context.newId(),
  now: () => nowMillis(turn),
  today: () => calendarDateAt(nowMillis(turn), turn.context.timeZone),
  callOutside: (request) => callOutside(turn, nodeId, request),
  aiConnection: (id) => (turn.context.aiConnections && Object.hasOwn(turn.context.aiConnections, id) ? turn.context.aiConnections[id] : undefined),
  callModel: (connectionId, request) => callModel(turn, nodeId, connectionId, request),
  noteModelCall: (call) => void (turn.out.modelCalls ??= []).push({ nodeId, ...call }),
  transcript: () => extendedTranscript(turn.context.transcript ?? [], turn.trigger, turn.out.messages),
  choose: (branches) => choose(turn, nodeId, branches),
})

/**
 * The turn's next draw: the choice the turn recorded in that place when it is this node's and names
 * one of its branches (a replay), else the branch the context's number lands on. Each draw takes a
 * number either way, so the draws after it take the same numbers in both.
 */
const choose = (turn: Turn, nodeId: string, branches: readonly { id: string; weight: number }[]): string => {
  const choices: Choice[] = (turn.out.choices ??= [])
  const draw = turn.context.random()
  const recorded = turn.context.choices?.[choices.length]
  const branchId = recorded?.nodeId === nodeId && branches.some((branch) => branch.id === recorded.branchId) ? recorded.branchId : weightedChoice(branches, draw)
  const inner = turn.state.frames?.at(-1)
  choices.push({ nodeId, branchId, ...(inner && { flow: { flowId: inner.flowId, version: inner.version } }) })
  return branchId
}

/**
 * The branch `draw` (in [0, 1)) lands on when the branches share [0, 1) in order, each as its weight
 * shares their sum: branch i is drawn with the chance weight_i / sum(weights).
 */
export const weightedChoice = (branches: readonly { id: string; weight: number }[], draw: number): string => {
  const total = branches.reduce((sum, branch) => sum + branch.weight, 0)
  let ticket = Math.floor(draw * total)
  for (const branch of branches) {
    if (ticket < branch.weight) return branch.id
    ticket -= branch.weight
  }
  const last = branches.at(-1)
  if (!last) throw new Error('no branch to choose')
  return last.id
}

/**
 * The turn's next call: its recorded answer, an answer of `limit` when a limit forbids the call
 * (the same on replay: it depends only on what is recorded), or undefined once the turn must wait
 * for the engine to make it.
 */
const callOutside = (turn: Turn, nodeId: string, request: HttpCallRequest): RecordedCall | undefined => {
  const index = turn.calls++
  const recorded = turn.context.calls?.[index]
  if (recorded) return recorded
  const limited = (message: string): RecordedCall => ({ index, nodeId, request, answer: { error: 'limit', message }, durationMs: 0 })
  if (index >= CALL_LIMITS.perTurn) return limited(`a turn makes at most ${CALL_LIMITS.perTurn} calls`)
  if ((turn.state.callsMade ?? 0) + index >= CALL_LIMITS.perSession) return limited(`a session makes at most ${CALL_LIMITS.perSession} calls`)
  const waited = (turn.context.calls ?? []).reduce((sum, call) => sum + call.durationMs, 0)
  if (waited >= CALL_LIMITS.turnWaitMs) return limited(`the calls of a turn may take ${CALL_LIMITS.turnWaitMs / 1000} s together`)
  turn.needed = { status: 'calling', index, nodeId, request }
  return undefined
}

/**
 * A model call through an AI connection: refused with `limit` once the session made the
 * connection's calls per session, else the turn's next call outside, counted for the session once
 * answered.
 */
const callModel = (turn: Turn, nodeId: string, connectionId: string, request: HttpCallRequest): RecordedCall | undefined => {
  const made = turn.state.modelCalls?.[connectionId] ?? 0
  const limit = turn.context.aiConnections?.[connectionId]?.callsPerSession ?? 0
  if (made >= limit) return { index: turn.calls, nodeId, request, answer: { error: 'limit', message: `a session makes at most ${limit} calls through this AI connection` }, durationMs: 0 }
  const call = callOutside(turn, nodeId, request)
  if (call && !('error' in call.answer && call.answer.error === 'limit')) turn.state.modelCalls = { ...turn.state.modelCalls, [connectionId]: made + 1 }
  return call
}

const sendable = TypeCompiler.Compile(OutgoingMessage)

/** A text's length as the channel counts it (and `LIMITS` is written): in code points. */
const codePoints = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

// A message the channel would reject is not sent; the flow builder gets a warning instead. Besides
// messages that slipped past validation, interpolation can empty a required text (`{{unset}}`).
// Interpolation can also lengthen a text past the channel's limit (a long reply saved and echoed):
// such a text is cut at the limit, with a warning, rather than sent to be refused or split into
// messages the flow did not draw.
const send = (turn: Turn, nodeId: string, messages: readonly OutgoingMessage[], interpolated = true): void => {
  const asWritten = <T>(use: (text: (template: string) => string) => T): T => use((template) => template)
  const rendered = (interpolated ? <T>(use: (text: (template: string) => string) => T) => interpolating(turn, nodeId, use) : asWritten)((text) =>
    messages.map((message, index) => {
      if (!sendable.Check(message)) return null
      return interpolateMessage(message, (template, limit) => {
        const filled = text(template)
        const length = codePoints(filled)
        if (limit === undefined || length <= limit) return filled
        turn.out.warnings.push(`message ${index + 1} of node ${nodeId}: a text of ${length} characters after interpolation was cut to the channel's ${limit}`)
        return [...filled].slice(0, limit).join('')
      })
    }),
  )
  for (const [index, message] of rendered.entries()) {
    if (message && sendable.Check(message)) {
      turn.out.messages.push({ ...message, nodeId })
      continue
    }
    const why = message ? 'a required text is empty after interpolation' : 'not a valid outgoing message'
    turn.out.warnings.push(`message ${index + 1} of node ${nodeId} not sent: ${why}`)
  }
}

const assign = (turn: Turn, name: string, value: VariableValue): void => {
  turn.state.variables[name] = value
  turn.out.variables[name] = structuredClone(value)
}

const finish = (turn: Turn, reason?: FinishReason): void => {
  turn.out.functions.push({ type: 'finish', timestamp: nextTimestamp(turn), ...(reason && { reason }) })
}

const nowMillis = (turn: Turn): number => Math.floor(turn.context.nowMicros / 1000)

/** Interpolates within one node visit, warning once per unknown variable. */
const interpolating = <T>(turn: Turn, nodeId: string, use: (text: (template: string) => string) => T, options?: InterpolationOptions): T => {
  const interpolate = interpolator(scope(turn), options)
  const result = use(interpolate.text)
  for (const path of interpolate.unknown) turn.out.warnings.push(`unknown variable {{${path}}} in node ${nodeId}`)
  return result
}

const scope = (turn: Turn): Scope => ({ system: turn.context.system, variables: turn.state.variables })

// Strictly increasing within the session even when the clock stalls or steps back.
const nextTimestamp = (turn: Turn): number => {
  const timestamp = Math.max(Math.floor(turn.context.nowMicros), turn.state.lastTimestampMicros + 1)
  turn.state.lastTimestampMicros = timestamp
  return timestamp
}

const fail = (turn: Turn, warning: string): Status => {
  turn.out.warnings.push(warning)
  return 'error'
}
