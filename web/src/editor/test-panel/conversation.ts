import type { components } from '../../../../client/src/schema'
import type { RecordedCall } from '../../../../src/domain/outside-call.js'
import type { BotMessage } from '../../shared/chat-transcript'
import type { InboundMessage, VariableValue } from '../api'
import type { SseEvent } from '../../shared/event-stream'

// What the test panel knows of its preview session: the chat as the person sees it and, for the
// builder, what the engine did in each turn. Built only from the session's stream (and what the
// person sent), so a restart or a reconnect shows exactly what the service recorded.

type WebhookBody = components['schemas']['WebhookBody']
type Change = WebhookBody['changes'][number]
export type TurnFunction = Extract<Change, { field: 'function' }>['value']['functions'][number]

/** A kanban action of a turn, as the debug event tells it (a preview moves no real card). */
export interface KanbanAction {
  action: 'create' | 'move'
  cardId: string
  pipelineId: string
  stageId: string
  previousStageId: string | null
}

/** The stream's `debug` event: what the engine did in one turn. */
export interface TurnDebug {
  messageId: string
  /** Node ids in the order the turn visited them. */
  path: string[]
  /** Every variable after the turn, and the ones the turn set. */
  variables: Record<string, VariableValue>
  changed: Record<string, VariableValue>
  warnings: string[]
  functions: TurnFunction[]
  kanban: KanbanAction[]
  waitingAt: string | null
  timer: PendingTimer | null
  status: SessionStatus
}

/** The timer the session waits for: a question's reminder or timeout, a wait's timeout, a delay's end. */
export interface PendingTimer {
  nodeId: string
  /** ISO time. */
  dueAt: string
}

export type SessionStatus = 'active' | 'completed' | 'timeout' | 'error'

/** The stream's `call` event: a call outside (an httpRequest node's) the turn for `messageId` made, and its answer. */
export interface TurnCall extends RecordedCall {
  messageId: string
}

/** A reply an AI step is writing: its text so far, from the stream's `text` events, until its turn brings the whole message. */
export interface Writing {
  messageId: string
  nodeId: string
  text: string
}

export type ChatEntry =
  | { kind: 'bot'; key: string; message: BotMessage }
  | { kind: 'person'; key: string; message: InboundMessage }
  | { kind: 'transfer'; key: string; targetType: 'sector' | 'agent'; targetId: string }
  | { kind: 'failed'; key: string; reason: string }
  | { kind: 'ended'; key: string; status: Exclude<SessionStatus, 'active'> }
  | { kind: 'event'; key: string; name: string }

export interface Conversation {
  chat: ChatEntry[]
  /** Each turn's debug event, oldest first. */
  turns: TurnDebug[]
  /** Each call outside the session's turns made, oldest first; a turn's calls come before its debug event. */
  calls: TurnCall[]
  /** The replies being written, oldest first: a turn's go when the turn comes, with its messages or without (it failed). */
  writing: Writing[]
  /** The turns the stream told, by message id: a piece of text arriving late for one of them starts no reply. */
  told: string[]
  variables: Record<string, VariableValue>
  /** Names of the variables the last turn set. */
  changed: string[]
  waitingAt: string | null
  timer: PendingTimer | null
  status: SessionStatus
}

export const newConversation = (variables: Record<string, VariableValue>): Conversation => ({
  chat: [],
  turns: [],
  calls: [],
  writing: [],
  told: [],
  variables,
  changed: [],
  waitingAt: null,
  timer: null,
  status: 'active',
})

export type ConversationEvent =
  | { type: 'sent'; key: string; message: InboundMessage }
  | { type: 'posted'; key: string; name: string }
  | { type: 'streamed'; event: SseEvent }
  /** The stream was cut: pieces of text missed cannot come again, so the replies being written wait for their turns. */
  | { type: 'reconnecting' }

export function evolveConversation(state: Conversation, event: ConversationEvent): Conversation {
  switch (event.type) {
    case 'sent':
      return { ...state, chat: [...state.chat, { kind: 'person', key: event.key, message: event.message }] }
    case 'posted':
      return { ...state, chat: [...state.chat, { kind: 'event', key: event.key, name: event.name }] }
    case 'streamed':
      return streamed(state, event.event)
    case 'reconnecting':
      return state.writing.length === 0 ? state : { ...state, writing: [] }
  }
}

function streamed(state: Conversation, event: SseEvent): Conversation {
  let data: unknown
  try {
    data = JSON.parse(event.data)
  } catch {
    return state
  }
  if (typeof data !== 'object' || data === null) return state
  switch (event.event) {
    case 'debug': {
      const debug = data as TurnDebug
      // A reconnect can send a turn's debug event again (it carries no id of its own).
      const turns = state.turns.at(-1)?.messageId === debug.messageId ? [...state.turns.slice(0, -1), debug] : [...state.turns, debug]
      return { ...state, turns, variables: debug.variables, changed: Object.keys(debug.changed), waitingAt: debug.waitingAt, timer: debug.timer ?? null, status: debug.status }
    }
    case 'turn': {
      const turn = data as WebhookBody
      return {
        ...state,
        chat: [...state.chat, ...chatOfTurn(turn)],
        writing: state.writing.filter((reply) => reply.messageId !== turn.messageId),
        told: state.told.includes(turn.messageId) ? state.told : [...state.told, turn.messageId],
      }
    }
    case 'text': {
      const piece = data as Writing
      if (state.told.includes(piece.messageId)) return state
      const at = state.writing.findIndex((reply) => reply.messageId === piece.messageId && reply.nodeId === piece.nodeId)
      if (at === -1) return { ...state, writing: [...state.writing, { messageId: piece.messageId, nodeId: piece.nodeId, text: piece.text }] }
      return { ...state, writing: state.writing.map((reply, i) => (i === at ? { ...reply, text: reply.text + piece.text } : reply)) }
    }
    case 'call': {
      const call = data as TurnCall
      // A reconnect may send a call again.
      if (state.calls.some((c) => c.messageId === call.messageId && c.index === call.index)) return state
      return { ...state, calls: [...state.calls, call] }
    }
    case 'end': {
      const status = (data as { status: Exclude<SessionStatus, 'active'> }).status
      if (state.chat.some((entry) => entry.kind === 'ended')) return state
      return { ...state, status, waitingAt: null, timer: null, writing: [], chat: [...state.chat, { kind: 'ended', key: `end`, status }] }
    }
    default:
      return state
  }
}

function chatOfTurn(turn: WebhookBody): ChatEntry[] {
  const entries: ChatEntry[] = []
  turn.changes.forEach((change, c) => {
    const key = (i: number) => `${turn.messageId}:${c}:${i}`
    switch (change.field) {
      case 'messages':
        change.value.messages.forEach((message, i) => entries.push({ kind: 'bot', key: key(i), message }))
        break
      case 'function':
        change.value.functions.forEach((fn, i) => {
          if (fn.type === 'transfer') entries.push({ kind: 'transfer', key: key(i), targetType: fn.targetType, targetId: fn.targetId })
        })
        break
      case 'event':
        change.value.events.forEach((domainEvent, i) => {
          if (domainEvent.domain === 'session') entries.push({ kind: 'failed', key: key(i), reason: domainEvent.payload.reason })
        })
        break
    }
  })
  return entries
}
