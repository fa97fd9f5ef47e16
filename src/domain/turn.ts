import { Type, type Static } from '@sinclair/typebox'
import { OutgoingMessage, type FlowDefinition } from './flow-definition.js'
import type { TypedNode } from './nodes/index.js'
import type { SubflowRef } from './nodes/node-type.js'
import { AnyKey, Timestamp } from './schemas.js'
import type { RecordedCall } from './outside-call.js'
import type { ConnectionAsUsed } from './ai-connection.js'

/**
 * The contract between the session's event stream and the interpreter: what a turn starts from,
 * what triggers it, and what it produces. Everything here is JSON-safe, because turn outputs are
 * stored in events and replayed.
 */

export const VariableValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Record(AnyKey, Type.Unknown())])
export type VariableValue = Static<typeof VariableValue>

/** An inbound message exactly as the send endpoint accepts it (spec §4.1). */
export const InboundMessage = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.Object({ body: Type.String() }) }),
  Type.Object({
    type: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document'), Type.Literal('sticker')]),
    media: Type.Object({ mimeType: Type.String(), url: Type.String(), caption: Type.Optional(Type.String()) }),
  }),
  Type.Object({
    type: Type.Literal('interactive'),
    interactive: Type.Union([
      Type.Object({ type: Type.Literal('button_reply'), button_reply: Type.Object({ id: Type.String(), title: Type.String() }) }),
      Type.Object({ type: Type.Literal('list_reply'), list_reply: Type.Object({ id: Type.String(), title: Type.String() }) }),
    ]),
  }),
])
export type InboundMessage = Static<typeof InboundMessage>

/** The session's kanban card as the conversation knows it. */
export const SessionCard = Type.Object({ cardId: Type.String(), pipelineId: Type.String(), stageId: Type.String() })

/** A flow a runFlow node ran, in the version it ran. */
export const FlowRef = Type.Object({ flowId: Type.String(), version: Type.Integer({ minimum: 1 }) })

/** Where a conversation stands between turns. */
export const ConversationState = Type.Object({
  /**
   * The node waiting: a question for a reply, with the invalid replies so far, a node waiting for an
   * outside `event`, or a delay. Its timer, if any, fires at `until` (a question's `reminded`
   * counts the reminders sent). Null before start and after the end.
   */
  waitingAt: Type.Union([
    Type.Object({
      nodeId: Type.String(),
      retries: Type.Integer({ minimum: 0 }),
      event: Type.Optional(Type.String()),
      until: Type.Optional(Timestamp),
      reminded: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    Type.Null(),
  ]),
  variables: Type.Record(AnyKey, VariableValue),
  /** Microseconds since the epoch of the newest function or domain event; the next must be larger. */
  lastTimestampMicros: Type.Integer({ minimum: 0 }),
  card: Type.Union([SessionCard, Type.Null()]),
  /** Outside events the session got while no node waited for them, oldest first, each taken by the next wait for its name. */
  inbox: Type.Optional(Type.Array(Type.Object({ eventId: Type.String(), name: Type.String(), data: Type.Record(AnyKey, Type.Unknown()) }))),
  /**
   * The sub-flows the conversation is in, outermost first: each the runFlow node of the flow
   * around it (`nodeId`) and the flow it runs. `waitingAt` names a node of the innermost.
   */
  frames: Type.Optional(Type.Array(Type.Composite([Type.Object({ nodeId: Type.String() }), FlowRef]))),
  /** Messages the user sent during a delay, oldest first, answered once the delay is over. */
  held: Type.Optional(Type.Array(InboundMessage)),
  /** Calls outside the session's turns made, for the limit per session. */
  callsMade: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Model calls the session's AI steps made, by AI connection id, for each connection's limit per session. */
  modelCalls: Type.Optional(Type.Record(AnyKey, Type.Integer({ minimum: 0 }))),
})
export type ConversationState = Static<typeof ConversationState>

/** The pending timer of a conversation waiting, as the API and the test panel show it. */
export const pendingTimer = (waitingAt: ConversationState['waitingAt']): { nodeId: string; dueAt: string } | null =>
  waitingAt?.until === undefined ? null : { nodeId: waitingAt.nodeId, dueAt: waitingAt.until }

/** Outside events a session keeps for a later wait (posted, or kept by a turn); the API refuses more. */
export const EVENTS_KEPT = 20
/** Messages a session holds during a delay; past it the oldest is dropped, with a warning. */
export const MESSAGES_HELD = 20

/** An event an outside system posted into the session (`POST /v1/sessions/{id}/events`). */
export const OutsideEvent = Type.Object({ name: Type.String(), data: Type.Record(AnyKey, Type.Unknown()) })
export type OutsideEvent = Static<typeof OutsideEvent>

export const Trigger = Type.Union([
  Type.Object({ type: Type.Literal('start') }),
  Type.Object({ type: Type.Literal('message'), message: InboundMessage }),
  Type.Object({ type: Type.Literal('event'), event: OutsideEvent }),
  /** A wait's timer: it ends the wait at `nodeId` that was to end at `until`, if the conversation still waits there. */
  Type.Object({ type: Type.Literal('timer'), nodeId: Type.String(), until: Timestamp }),
])
export type Trigger = Static<typeof Trigger>

export const TurnFunction = Type.Union([
  Type.Object({
    type: Type.Literal('transfer'),
    targetType: Type.Union([Type.Literal('sector'), Type.Literal('agent')]),
    targetId: Type.String(),
    timestamp: Type.Integer(),
  }),
  /** `reason` `timeout`: a question or a wait for an event timed out with no edge at its `timeout` exit. */
  Type.Object({ type: Type.Literal('finish'), timestamp: Type.Integer(), reason: Type.Optional(Type.Literal('timeout')) }),
])
export type TurnFunction = Static<typeof TurnFunction>

/** What a kanbanMove node did to the session's card; the engine then applies it to the card stream. */
export const KanbanAction = Type.Object({
  action: Type.Union([Type.Literal('create'), Type.Literal('move')]),
  cardId: Type.String(),
  pipelineId: Type.String(),
  stageId: Type.String(),
  previousStageId: Type.Union([Type.String(), Type.Null()]),
  values: Type.Record(AnyKey, Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  tags: Type.Array(Type.String()),
  timestamp: Type.Integer(),
  nodeId: Type.String(),
})
export type KanbanAction = Static<typeof KanbanAction>

export const SentMessage = Type.Intersect([OutgoingMessage, Type.Object({ nodeId: Type.String() })])

/** The branch a visit of a split node drew; `flow`, the sub-flow the split is in (none: the session's own flow). */
export const Choice = Type.Object({ nodeId: Type.String(), branchId: Type.String(), flow: Type.Optional(FlowRef) })
export type Choice = Static<typeof Choice>

/** One model call an AI step made in a turn, with the tokens the endpoint counted for it. */
export const ModelCall = Type.Object({
  nodeId: Type.String(),
  connectionId: Type.String(),
  model: Type.String(),
  promptTokens: Type.Integer({ minimum: 0 }),
  completionTokens: Type.Integer({ minimum: 0 }),
  durationMs: Type.Integer({ minimum: 0 }),
})
export type ModelCall = Static<typeof ModelCall>

export const TurnOutput = Type.Object({
  /** Interpolated, in the webhook's shape, each with the node that produced it. */
  messages: Type.Array(SentMessage),
  functions: Type.Array(TurnFunction),
  kanban: Type.Array(KanbanAction),
  /** Variables this turn set (answers saved, setVariable), by name. */
  variables: Type.Record(AnyKey, VariableValue),
  warnings: Type.Array(Type.String()),
  /** Node ids in the order the turn visited them. */
  visited: Type.Array(Type.String()),
  /**
   * Where `visited` moves between flows, in a turn that ran nodes of sub-flows: from index `from` on
   * its nodes are of `flow` (null: the session's own flow), up to the next entry. Absent when every
   * node visited is of the session's own flow.
   */
  flowsVisited: Type.Optional(Type.Array(Type.Object({ from: Type.Integer({ minimum: 0 }), flow: Type.Union([FlowRef, Type.Null()]) }))),
  /**
   * The branch each split visit drew, in the order drawn: a replay takes these rather than drawing
   * again. Absent when the turn drew none.
   */
  choices: Type.Optional(Type.Array(Choice)),
  /** The model calls the turn's AI steps made, in order, with their token counts. Absent when it made none. */
  modelCalls: Type.Optional(Type.Array(ModelCall)),
  status: Type.Union([Type.Literal('active'), Type.Literal('completed'), Type.Literal('error')]),
  state: ConversationState,
})
export type TurnOutput = Static<typeof TurnOutput>

/**
 * The warning a question records for a reply it did not accept. It is stored in every such turn, and
 * the analytics read models tell answered questions by it: its wording is part of the turn's record.
 */
export const invalidReplyWarning = (nodeId: string): string => `invalid reply to ${nodeId}`

/** What a turn may take from outside: the time, fresh ids and chance, so the interpreter stays pure. */
export interface TurnContext {
  /** Microseconds since the epoch, now. */
  nowMicros: number
  /** The workspace's IANA time zone (`UTC` when it has none): the calendar `nowMicros` falls on for date replies. */
  timeZone: string
  newId(): string
  /** A number in [0, 1) for each draw of the turn, in order. */
  random(): number
  /** The choices a recorded turn drew, in order: a replay takes them rather than drawing again. */
  choices?: readonly Choice[]
  /** Read-only system variables (`sessionId`, `externalId`, …) visible to templates and conditions. */
  system: Record<string, VariableValue>
  /** The calls outside this turn made so far, recorded with their answers, in order. */
  calls?: readonly RecordedCall[]
  /** The AI connections the flow's AI steps use, by id, as they stood for this turn; one missing is deleted. */
  aiConnections?: Readonly<Record<string, ConnectionAsUsed>>
  /** The conversation's last messages before this turn's trigger, oldest first, for AI steps that read it. */
  transcript?: readonly TranscriptLine[]
}

/** A text of the conversation: one the user sent, or one the flow sent. */
export const TranscriptLine = Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), text: Type.String() })
export type TranscriptLine = Static<typeof TranscriptLine>

/** The texts a session keeps for AI steps' history: the newest, the older dropped. */
export const TRANSCRIPT_KEPT = 20

/** What the user said in a trigger, as a template's `{{lastMessage}}` reads it; '' for triggers that are no message. */
export const triggerText = (trigger: Trigger): string => {
  if (trigger.type !== 'message') return ''
  const { message } = trigger
  switch (message.type) {
    case 'text':
      return message.text.body
    case 'interactive':
      return message.interactive.type === 'button_reply' ? message.interactive.button_reply.title : message.interactive.list_reply.title
    default:
      return message.media.caption ?? message.media.url
  }
}

/** The words a message the flow sent shows a person; undefined for one without (a template). */
export const sentText = (message: OutgoingMessage): string | undefined => {
  switch (message.type) {
    case 'text':
      return message.text.body
    case 'interactive':
      return message.interactive.body.text
    case 'media':
      return message.media.caption
    default:
      return undefined
  }
}

/** The transcript after a turn: its trigger's text and the texts it sent appended, the oldest past TRANSCRIPT_KEPT dropped. */
export const extendedTranscript = (transcript: readonly TranscriptLine[], trigger: Trigger, sent: readonly OutgoingMessage[]): TranscriptLine[] => {
  const said = triggerText(trigger)
  const lines: TranscriptLine[] = [
    ...transcript,
    ...(said ? [{ role: 'user' as const, text: said }] : []),
    ...sent.flatMap((message) => {
      const text = sentText(message)
      return text ? [{ role: 'assistant' as const, text }] : []
    }),
  ]
  return lines.slice(-TRANSCRIPT_KEPT)
}

/** A flow a runFlow node runs, in the version that runs: its version number, nodes and edges. */
export interface Subflow {
  version: number
  nodes: readonly TypedNode[]
  edges: FlowDefinition['edges']
}
/**
 * The flows a session's runFlow nodes run, by `subflowKey` of the node's reference (`published`
 * resolved as the session started, and by the version number it resolved to): each, or a sentence
 * saying why it cannot run.
 */
export type Subflows = ReadonlyMap<string, Subflow | string>
export const subflowKey = (ref: SubflowRef): string => `${ref.flowId}@${ref.version}`
