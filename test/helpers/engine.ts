import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { NodeData, NodeTypeName, TypedNode } from '../../src/domain/nodes/index.js'
import { initialConversation, runTurn, type RunnableFlow } from '../../src/engine/interpreter.js'
import { TurnOutput, type ConversationState, type InboundMessage, type Trigger, type TurnContext, type VariableValue } from '../../src/domain/turn.js'

/** Builders for flows, triggers and contexts, so each test shows only the nodes it is about. */

export const NOW = 1_767_225_600_000_000
export const SECTOR = '0190a0b0-0000-7000-8000-0000000000a1'
export const AGENT = '0190a0b0-0000-7000-8000-0000000000a2'
export const PIPELINE = '0190a0b0-0000-7000-8000-0000000000b1'
export const OTHER_PIPELINE = '0190a0b0-0000-7000-8000-0000000000b2'
export const STAGE_NEW = '0190a0b0-0000-7000-8000-0000000000c1'
export const STAGE_WON = '0190a0b0-0000-7000-8000-0000000000c2'
export const STAGE_OTHER = '0190a0b0-0000-7000-8000-0000000000c3'

type Data<T extends NodeTypeName> = NodeData<T>
type Edge = RunnableFlow['edges'][number]

const at = { x: 0, y: 0 }

export const start = (id = 'start'): TypedNode => ({ id, type: 'start', position: at, data: {} })
export const message = (id: string, ...messages: OutgoingMessage[]): TypedNode => ({ id, type: 'message', position: at, data: { messages } })
export const question = (id: string, data: Data<'question'>): TypedNode => ({ id, type: 'question', position: at, data })
export const condition = (id: string, ...rules: Data<'condition'>['rules']): TypedNode => ({ id, type: 'condition', position: at, data: { rules } })
export const split = (id: string, ...branches: Data<'split'>['branches']): TypedNode => ({ id, type: 'split', position: at, data: { branches } })
export const setVariable = (id: string, variable: string, value: Data<'setVariable'>['value']): TypedNode => ({
  id,
  type: 'setVariable',
  position: at,
  data: { variable, value },
})
export const transfer = (id: string, targetType: 'sector' | 'agent', targetId: string): TypedNode => ({
  id,
  type: 'transfer',
  position: at,
  data: { targetType, targetId },
})
export const kanbanMove = (id: string, data: Data<'kanbanMove'>): TypedNode => ({ id, type: 'kanbanMove', position: at, data })
export const end = (id = 'end'): TypedNode => ({ id, type: 'end', position: at, data: {} })

export const edge = (source: string, target: string, sourceHandle?: string): Edge => ({
  id: `${source}:${sourceHandle ?? ''}->${target}`,
  source,
  target,
  ...(sourceHandle !== undefined && { sourceHandle }),
})
/** Unnamed exits linking the ids in order. */
export const chain = (...ids: string[]): Edge[] => ids.slice(1).map((target, i) => edge(ids[i] ?? '', target))
export const flow = (nodes: TypedNode[], edges: Edge[]): RunnableFlow => ({ schemaVersion: 1, nodes, edges })

export const text = (body: string, tags?: string[]): OutgoingMessage => ({ type: 'text', text: { body }, ...(tags && { tags }) })
export const buttons = (body: string, ...choices: [id: string, title: string][]): OutgoingMessage => ({
  type: 'interactive',
  interactive: { type: 'button', body: { text: body }, action: { buttons: choices.map(([id, title]) => ({ id, title })) } },
})
export const list = (body: string, ...rows: [id: string, title: string][]): OutgoingMessage => ({
  type: 'interactive',
  interactive: {
    type: 'list',
    body: { text: body },
    action: { button: 'Options', sections: [{ title: 'All', rows: rows.map(([id, title]) => ({ id, title })) }] },
  },
})

/** Variables of every kind templates read: text, a number, a boolean, nested objects and an array. */
export const customerVariables: Record<string, VariableValue> = {
  name: 'Ana',
  plan: 'Pro',
  total: 99.5,
  vip: true,
  customer: { name: 'Ana Souza', address: { city: 'Recife' }, orders: [{ id: 'o-1' }] },
}

export const START: Trigger = { type: 'start' }
export const say = (message: InboundMessage): Trigger => ({ type: 'message', message })
export const textReply = (body: string): Trigger => say({ type: 'text', text: { body } })
export const buttonReply = (id: string, title: string): Trigger => say({ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id, title } } })
export const listReply = (id: string, title: string): Trigger => say({ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id, title } } })
export const mediaReply = (
  type: 'image' | 'video' | 'audio' | 'document' | 'sticker',
  media: { mimeType: string; url: string; caption?: string },
): Trigger => say({ type, media })

export const context = (overrides: Partial<TurnContext> = {}): TurnContext => {
  let issued = 0
  return {
    nowMicros: NOW,
    timeZone: 'UTC',
    newId: () => `card-${++issued}`,
    // Every draw lands on the first branch unless a test gives its own numbers.
    random: () => 0,
    system: { sessionId: 'session-1', externalId: 'contact-1' },
    ...overrides,
  }
}

const outputCheck = TypeCompiler.Compile(TurnOutput)

/** runTurn, failing the test when the output breaks the turn contract's schema. */
export const turn = (f: RunnableFlow, state: ConversationState, trigger: Trigger, ctx: TurnContext = context()): TurnOutput => {
  const output = runTurn(f, state, trigger, ctx)
  if (!outputCheck.Check(output)) {
    const error = outputCheck.Errors(output).First()
    throw new Error(`turn output breaks its schema at ${error?.path}: ${error?.message}`)
  }
  return output
}

/** Starts the flow, then sends each reply into the state the previous turn left; one output per turn. */
export const converse = (f: RunnableFlow, replies: Trigger[], variables: Record<string, VariableValue> = {}, ctx = context()): TurnOutput[] => {
  const outputs: TurnOutput[] = []
  let state = initialConversation(variables)
  for (const trigger of [START, ...replies]) {
    const output = turn(f, state, trigger, ctx)
    outputs.push(output)
    state = output.state
  }
  return outputs
}

/** The last of a conversation's outputs. */
export const last = (outputs: TurnOutput[]): TurnOutput => {
  const output = outputs.at(-1)
  if (!output) throw new Error('no turn ran')
  return output
}

export const bodies = (output: TurnOutput): string[] => output.messages.map((m) => (m.type === 'text' ? m.text.body : `<${m.type}>`))
