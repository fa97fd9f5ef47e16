import { TypeCompiler } from '@sinclair/typebox/compiler'
import { OutgoingMessage, type FlowDefinition, type TypedNode } from '../domain/flow-definition.js'
import { judge } from './conditions.js'
import { interpolator, lookup, type Scope } from './interpolate.js'
import { interpolateMessage } from './messages.js'
import { choicesOf, parseReply } from './replies.js'
import { invalidReplyWarning, type ConversationState, type InboundMessage, type Trigger, type TurnContext, type TurnOutput, type VariableValue } from './turn.js'

export const MAX_NODES_PER_TURN = 100
export const DEFAULT_MAX_RETRIES = 2

/** A flow definition that passed validation: each node's `data` matches its type's schema. */
export type RunnableFlow = Omit<FlowDefinition, 'nodes'> & { nodes: TypedNode[] }

type NodeOf<T extends TypedNode['type']> = Extract<TypedNode, { type: T }>
type Status = TurnOutput['status']

/** How a visit ends: leave by a handle (null is the unnamed exit), wait for a reply, or complete. */
type Step = { exit: string | null } | 'wait' | 'complete'

/** A turn in progress. It owns copies of everything it changes, so runTurn stays pure. */
interface Turn {
  flow: RunnableFlow
  nodes: ReadonlyMap<string, TypedNode>
  context: TurnContext
  state: ConversationState
  out: Omit<TurnOutput, 'status' | 'state'>
}

/** The state of a conversation that has not started yet, holding the session's initial variables. */
export const initialConversation = (variables: Record<string, VariableValue> = {}): ConversationState => ({
  waitingAt: null,
  variables: structuredClone(variables),
  lastTimestampMicros: 0,
  card: null,
})

/**
 * Runs one turn of a conversation: from the start node (trigger `start`) or from the question the
 * conversation waits at (trigger `message`), until it waits for a reply, completes or fails. Pure:
 * time and ids come from `context`, and neither `state` nor `flow` is modified.
 */
export const runTurn = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext): TurnOutput => {
  const turn = beginTurn(flow, state, context)
  const status = guarded(turn, () => (trigger.type === 'start' ? start(turn) : reply(turn, trigger.message)))
  if (status !== 'active') turn.state.waitingAt = null
  return { ...turn.out, status, state: turn.state }
}

const beginTurn = (flow: RunnableFlow, state: ConversationState, context: TurnContext): Turn => ({
  flow,
  nodes: new Map(flow.nodes.map((node) => [node.id, node])),
  context,
  state: structuredClone(state),
  out: { messages: [], functions: [], kanban: [], variables: {}, warnings: [], visited: [] },
})

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

const start = (turn: Turn): Status => {
  const startNode = turn.flow.nodes.find((node) => node.type === 'start')
  if (!startNode) return fail(turn, 'broken reference: the flow has no start node')
  turn.state.waitingAt = null
  return walk(turn, startNode.id)
}

const reply = (turn: Turn, message: InboundMessage): Status => {
  const waiting = turn.state.waitingAt
  if (!waiting) {
    turn.out.warnings.push('message ignored: the conversation is not waiting for a reply')
    return 'completed'
  }
  const node = turn.nodes.get(waiting.nodeId)
  if (node?.type !== 'question') return fail(turn, `broken reference: waiting at ${waiting.nodeId}, which is not a question of this flow`)
  turn.out.visited.push(node.id)
  const step = answer(turn, node, waiting.retries, message)
  return step === 'wait' ? 'active' : leave(turn, node.id, step.exit)
}

const walk = (turn: Turn, nodeId: string): Status => {
  if (turn.out.visited.length >= MAX_NODES_PER_TURN) return fail(turn, `loop limit: more than ${MAX_NODES_PER_TURN} nodes in one turn`)
  const node = turn.nodes.get(nodeId)
  if (!node) return fail(turn, `broken reference: node ${nodeId} does not exist`)
  turn.out.visited.push(node.id)
  const step = visit(turn, node)
  if (step === 'wait') return 'active'
  if (step === 'complete') return 'completed'
  return leave(turn, node.id, step.exit)
}

/** Follows a node's exit; an exit with no edge ends the session as an end node would. */
const leave = (turn: Turn, nodeId: string, handle: string | null): Status => {
  const edge = turn.flow.edges.find((candidate) => candidate.source === nodeId && (candidate.sourceHandle ?? null) === handle)
  if (edge) return walk(turn, edge.target)
  finish(turn)
  return 'completed'
}

const visit = (turn: Turn, node: TypedNode): Step => {
  switch (node.type) {
    case 'start':
      return { exit: null }
    case 'message':
      send(turn, node.id, node.data.messages)
      return { exit: null }
    case 'question':
      send(turn, node.id, [node.data.prompt])
      turn.state.waitingAt = { nodeId: node.id, retries: 0 }
      return 'wait'
    case 'condition':
      return { exit: firstMatchingRule(turn, node) ?? 'default' }
    case 'setVariable':
      assign(turn, node.data.variable, valueOf(turn, node.id, node.data.value))
      return { exit: null }
    case 'kanbanMove':
      moveCard(turn, node)
      return { exit: null }
    case 'transfer':
      turn.out.functions.push({ type: 'transfer', targetType: node.data.targetType, targetId: node.data.targetId, timestamp: nextTimestamp(turn) })
      return 'complete'
    case 'end':
      finish(turn)
      return 'complete'
    default: {
      const unknown: never = node
      throw new Error(`unknown node type in ${JSON.stringify(unknown)}`)
    }
  }
}

const answer = (turn: Turn, node: NodeOf<'question'>, retries: number, message: InboundMessage): Exclude<Step, 'complete'> => {
  const { data } = node
  const silent = interpolator(scope(turn)).text
  const choices = data.input.kind === 'choice' ? choicesOf(data.prompt).map(({ id, title }) => ({ id, title: silent(title) })) : []
  const accepted = parseReply(data.input.kind, message, choices)
  if (accepted) {
    if (data.saveAs) assign(turn, data.saveAs, accepted.value)
    turn.state.waitingAt = null
    return { exit: accepted.handle }
  }
  turn.out.warnings.push(invalidReplyWarning(node.id))
  if (retries < (data.maxRetries ?? DEFAULT_MAX_RETRIES)) {
    send(turn, node.id, [data.retryMessage ?? data.prompt])
    turn.state.waitingAt = { nodeId: node.id, retries: retries + 1 }
    return 'wait'
  }
  turn.state.waitingAt = null
  return { exit: 'invalid' }
}

const firstMatchingRule = (turn: Turn, node: NodeOf<'condition'>): string | undefined => {
  for (const rule of node.data.rules) {
    const verdict = judge(rule, lookup(scope(turn), rule.variable))
    if (verdict.problem) turn.out.warnings.push(`rule ${rule.id} of node ${node.id}: ${verdict.problem}`)
    if (verdict.matched) return rule.id
  }
  return undefined
}

const moveCard = (turn: Turn, node: NodeOf<'kanbanMove'>): void => {
  const { pipelineId, stageId } = node.data
  const card = turn.state.card
  const moving = card !== null && card.pipelineId === pipelineId
  const cardId = moving ? card.cardId : turn.context.newId()
  const values = interpolating(turn, node.id, (text) =>
    Object.fromEntries(Object.entries(node.data.values ?? {}).map(([field, value]) => [field, typeof value === 'string' ? text(value) : value])),
  )
  turn.out.kanban.push({
    action: moving ? 'move' : 'create',
    cardId,
    pipelineId,
    stageId,
    previousStageId: moving ? card.stageId : null,
    values,
    tags: [...(node.data.tags ?? [])],
    timestamp: nextTimestamp(turn),
    nodeId: node.id,
  })
  turn.state.card = { cardId, pipelineId, stageId }
}

const sendable = TypeCompiler.Compile(OutgoingMessage)

// A message the channel would reject is not sent; the flow builder gets a warning instead. Besides
// messages that slipped past validation, interpolation can empty a required text (`{{unset}}`).
const send = (turn: Turn, nodeId: string, messages: OutgoingMessage[]): void => {
  const rendered = interpolating(turn, nodeId, (text) => messages.map((message) => (sendable.Check(message) ? interpolateMessage(message, text) : null)))
  for (const [index, message] of rendered.entries()) {
    if (message && sendable.Check(message)) {
      turn.out.messages.push({ ...message, nodeId })
      continue
    }
    const why = message ? 'a required text is empty after interpolation' : 'not a valid outgoing message'
    turn.out.warnings.push(`message ${index + 1} of node ${nodeId} not sent: ${why}`)
  }
}

const valueOf = (turn: Turn, nodeId: string, value: VariableValue): VariableValue =>
  typeof value === 'string' ? interpolating(turn, nodeId, (text) => text(value)) : structuredClone(value)

const assign = (turn: Turn, name: string, value: VariableValue): void => {
  turn.state.variables[name] = value
  turn.out.variables[name] = structuredClone(value)
}

const finish = (turn: Turn): void => {
  turn.out.functions.push({ type: 'finish', timestamp: nextTimestamp(turn) })
}

/** Interpolates within one node visit, warning once per unknown variable. */
const interpolating = <T>(turn: Turn, nodeId: string, use: (text: (template: string) => string) => T): T => {
  const interpolate = interpolator(scope(turn))
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
