import { TypeCompiler } from '@sinclair/typebox/compiler'
import { OutgoingMessage, type FlowDefinition } from '../domain/flow-definition.js'
import { interpolator, type Scope } from '../domain/interpolate.js'
import { interpolateMessage } from './messages.js'
import { nodeTypeOf, nodeTypes, type NodeTypes, type TypedNode } from '../domain/nodes/index.js'
import type { Step, Visit } from '../domain/nodes/node-type.js'
import type { ConversationState, InboundMessage, Trigger, TurnContext, TurnOutput, VariableValue } from '../domain/turn.js'

export const MAX_NODES_PER_TURN = 100

/** A flow definition that passed validation: each node's `data` matches its type's schema. */
export type RunnableFlow = Omit<FlowDefinition, 'nodes'> & { nodes: TypedNode[] }

type Status = TurnOutput['status']

/** A turn in progress. It owns copies of everything it changes, so runTurn stays pure. */
interface Turn {
  flow: RunnableFlow
  types: NodeTypes
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
export const runTurn = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext, types: NodeTypes = nodeTypes): TurnOutput => {
  const turn = beginTurn(flow, state, context, types)
  const status = guarded(turn, () => (trigger.type === 'start' ? start(turn) : reply(turn, trigger.message)))
  if (status !== 'active') turn.state.waitingAt = null
  return { ...turn.out, status, state: turn.state }
}

const beginTurn = (flow: RunnableFlow, state: ConversationState, context: TurnContext, types: NodeTypes): Turn => ({
  flow,
  types,
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
  const resume = node && nodeTypeOf(turn.types, node.type)?.resume
  if (!node || !resume) return fail(turn, `broken reference: waiting at ${waiting.nodeId}, which is not a question of this flow`)
  turn.out.visited.push(node.id)
  const step = resume(node, visiting(turn, node.id), waiting.retries, message)
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
  interpolating: (use) => interpolating(turn, nodeId, use),
  assign: (name, value) => assign(turn, name, value),
  warn: (warning) => turn.out.warnings.push(warning),
  wait: (retries) => {
    turn.state.waitingAt = { nodeId, retries }
  },
  stopWaiting: () => {
    turn.state.waitingAt = null
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
})

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
const send = (turn: Turn, nodeId: string, messages: readonly OutgoingMessage[]): void => {
  const rendered = interpolating(turn, nodeId, (text) =>
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
