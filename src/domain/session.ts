import { Type, type Static } from '@sinclair/typebox'
import { v5 as uuidV5 } from 'uuid'
import { ConversationState, EVENTS_KEPT, InboundMessage, OutsideEvent, TurnOutput, VariableValue, extendedTranscript, type ModelCall, type TranscriptLine, type Trigger } from './turn.js'
import { ConnectionAsUsed } from './ai-connection.js'
import { FlowDefinition } from './flow-definition.js'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { AnyKey, Timestamp, Uuid } from './schemas.js'
import { RecordedCall } from './outside-call.js'

export const sessionStream = (sessionId: string) => `session-${sessionId}`

/**
 * The metadata the engine records on a preview's turns: a turn's data does not say whose session it
 * is, and what follows the log (kanban, analytics) leaves previews out by it.
 */
export const PREVIEW_TURN_METADATA = { preview: true } as const
export const isPreviewTurn = (metadata: { readonly [key: string]: unknown }): boolean => metadata.preview === true

const SessionStarted = Type.Object({
  sessionId: Uuid,
  workspaceId: Uuid,
  organizationId: Uuid,
  flowId: Uuid,
  /** The published version the session runs to its end; 0 for a preview, which runs `preview.definition`. */
  flowVersion: Type.Integer({ minimum: 0 }),
  variables: Type.Record(AnyKey, VariableValue),
  externalId: Type.Union([Type.String(), Type.Null()]),
  /** The key that created the session, and its callback as it was then: webhooks go there. Null: a preview the editor started. */
  apiKeyId: Type.Union([Uuid, Type.Null()]),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  ttlSeconds: Type.Integer({ minimum: 1 }),
  /** Identifies the first turn (the flow's response to the start) in its webhook. */
  messageId: Uuid,
  startedAt: Timestamp,
  expiresAt: Timestamp,
  /**
   * A preview: the flow's draft as it was at the start, run by the real engine. It sends no
   * webhooks, moves no real cards and stays out of the session logs and analytics.
   */
  preview: Type.Optional(Type.Object({ definition: FlowDefinition })),
})

const MessageReceived = Type.Object({
  sessionId: Uuid,
  messageId: Uuid,
  message: InboundMessage,
  idempotencyKey: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Timestamp,
  /** Inactivity expiry slides forward with every inbound message. */
  expiresAt: Timestamp,
})

const TurnCompleted = Type.Object({
  sessionId: Uuid,
  /** The trigger: the session's start, the inbound message, outside event or timer this turn answered. */
  messageId: Uuid,
  output: TurnOutput,
  completedAt: Timestamp,
  /**
   * The workspace's time zone the turn read dates in, present when its flow has a `date` question:
   * replay reads it from here, as it reads the clock from `completedAt`.
   */
  timeZone: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * The AI connections the turn's flow uses, by id, as they stood for the turn (a deleted one is
   * absent), present when its flow has AI steps: replay reads them from here.
   */
  aiConnections: Type.Optional(Type.Record(AnyKey, ConnectionAsUsed)),
  /** A turn that waits with a timer keeps the session from expiring before the timer fires: its new expiry. */
  expiresAt: Type.Optional(Timestamp),
})

/**
 * Why a turn could not be completed, as a code (never a stack trace): `engine_error`, the engine
 * failed on it; `invalid_turn`, its output did not pass the turn's schema.
 */
export const TurnFailureReason = Type.Union([Type.Literal('engine_error'), Type.Literal('invalid_turn')])
export type TurnFailureReason = Static<typeof TurnFailureReason>

/** The engine could not complete the oldest pending trigger's turn, again and again: the session ends in error. */
const TurnFailed = Type.Object({
  sessionId: Uuid,
  messageId: Uuid,
  reason: TurnFailureReason,
  failedAt: Timestamp,
  /** Microseconds, after every earlier timestamp of the session: the `finish` its webhook reports. */
  timestamp: Type.Integer({ minimum: 0 }),
})

const SessionExpired = Type.Object({ sessionId: Uuid, expiredAt: Timestamp })

/** An event an outside system posted (`POST /v1/sessions/{id}/events`): a trigger like a message. */
const OutsideEventReceived = Type.Object({
  sessionId: Uuid,
  messageId: Uuid,
  event: OutsideEvent,
  idempotencyKey: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Timestamp,
})

/** A wait's timer fired: a trigger whose turn leaves the waiting node by its timeout, if it still waits. */
const TimerFired = Type.Object({ sessionId: Uuid, messageId: Uuid, nodeId: Type.String(), until: Timestamp, firedAt: Timestamp })

/**
 * A call outside the conversation the oldest pending trigger's turn made (an `httpRequest`), with
 * its answer: the turn is run again with it, and replay reads it instead of calling.
 */
const OutsideCallAnswered = Type.Intersect([
  Type.Object({ sessionId: Uuid, messageId: Uuid, answeredAt: Timestamp }),
  RecordedCall,
])

export type SessionEvent =
  | { type: 'SessionStarted'; data: Static<typeof SessionStarted> }
  | { type: 'MessageReceived'; data: Static<typeof MessageReceived> }
  | { type: 'TurnCompleted'; data: Static<typeof TurnCompleted> }
  | { type: 'TurnFailed'; data: Static<typeof TurnFailed> }
  | { type: 'SessionExpired'; data: Static<typeof SessionExpired> }
  | { type: 'OutsideCallAnswered'; data: Static<typeof OutsideCallAnswered> }
  | { type: 'OutsideEventReceived'; data: Static<typeof OutsideEventReceived> }
  | { type: 'TimerFired'; data: Static<typeof TimerFired> }

export type SessionCommand =
  | { type: 'StartSession'; data: Omit<Static<typeof SessionStarted>, 'startedAt' | 'expiresAt'> & { now: string } }
  | {
      type: 'ReceiveMessage'
      data: {
        sessionId: string
        workspaceId: string
        /** The caller reaches only preview sessions (the editor): any other is not found. */
        previewsOnly?: boolean
        messageId: string
        message: InboundMessage
        idempotencyKey: string | null
        now: string
      }
    }
  | { type: 'CompleteTurn'; data: { sessionId: string; messageId: string; output: TurnOutput; now: string; timeZone?: string; aiConnections?: Record<string, ConnectionAsUsed> } }
  | { type: 'FailTurn'; data: { sessionId: string; messageId: string; reason: TurnFailureReason; now: string } }
  | { type: 'ExpireSession'; data: { sessionId: string; now: string } }
  | { type: 'RecordCallAnswer'; data: { sessionId: string; messageId: string; call: RecordedCall; now: string } }
  | {
      type: 'ReceiveEvent'
      data: { sessionId: string; workspaceId: string; previewsOnly?: boolean; messageId: string; event: OutsideEvent; idempotencyKey: string | null; now: string }
    }
  | { type: 'FireTimer'; data: { sessionId: string; messageId: string; nodeId: string; until: string; now: string } }
  /** A tester fires a preview session's pending timer before it is due (the editor's test panel). */
  | { type: 'FireTimerNow'; data: { sessionId: string; workspaceId: string; previewsOnly?: boolean; now: string } }

/**
 * The id of a timer's trigger, derived from the wait it ends, so that firing it twice (two sweeps,
 * or a sweep and a tester) makes one trigger.
 */
export const timerTriggerId = (sessionId: string, nodeId: string, until: string): string => uuidV5(`${sessionId}/${nodeId}/${until}`, TIMER_ID_NAMESPACE)
const TIMER_ID_NAMESPACE = 'a3c1e0f4-63b8-4a52-8f0e-4d8c2b7e9a61'

export type SessionStatus = 'active' | 'completed' | 'timeout' | 'error'

export interface PendingTurn {
  messageId: string
  trigger: Trigger
}

export type Session =
  | { status: 'none' }
  | {
      status: SessionStatus
      sessionId: string
      workspaceId: string
      organizationId: string
      flowId: string
      flowVersion: number
      /** The draft a preview session runs; null for a session of a published version. */
      previewDefinition: FlowDefinition | null
      externalId: string | null
      apiKeyId: string | null
      callbackUrl: string | null
      ttlSeconds: number
      startedAt: string
      expiresAt: string
      finishedAt: string | null
      conversation: ConversationState
      /** Triggers still waiting for their turn, oldest first. */
      pending: PendingTurn[]
      /** The calls outside the oldest pending trigger's turn made so far, with their answers. */
      calls: RecordedCall[]
      /** The conversation's newest texts, for AI steps' history. */
      transcript: TranscriptLine[]
      /** The model calls the session's AI steps made, and the tokens they took. */
      modelUsage: ModelUsage
      /** Idempotency-Key (`messageKey`, `eventKey`) → the messageId it produced. */
      idempotencyKeys: Record<string, string>
      warnings: number
      /** Why the engine ended it in error, when it did (`TurnFailed`). */
      failureReason: TurnFailureReason | null
    }

/** Model calls and the tokens they took, as the endpoints counted them. */
export interface ModelUsage {
  calls: number
  promptTokens: number
  completionTokens: number
}

export const NO_MODEL_USAGE: ModelUsage = { calls: 0, promptTokens: 0, completionTokens: 0 }

export const addedModelUsage = (usage: ModelUsage, calls: readonly ModelCall[]): ModelUsage =>
  calls.reduce((sum, call) => ({ calls: sum.calls + 1, promptTokens: sum.promptTokens + call.promptTokens, completionTokens: sum.completionTokens + call.completionTokens }), usage)

/** Messages and events keep their Idempotency-Keys apart (`idempotencyKeys`): one key may be used for each. */
export const messageKey = (idempotencyKey: string) => `message ${idempotencyKey}`
export const eventKey = (idempotencyKey: string) => `event ${idempotencyKey}`

type RunningSession = Exclude<Session, { status: 'none' }>

/**
 * The session a trigger is sent into: not found from another workspace (or, for the editor, when
 * it is not a preview); undefined when `key` (an Idempotency-Key) made a trigger already; 409 once
 * it no longer runs.
 */
const receiving = (state: Session, caller: { sessionId: string; workspaceId: string; previewsOnly?: boolean; now: string }, key: string | null): RunningSession | undefined => {
  if (state.status === 'none' || state.workspaceId !== caller.workspaceId || (caller.previewsOnly && state.previewDefinition === null)) {
    throw new NotFoundError(`session ${caller.sessionId} not found`)
  }
  if (key !== null && Object.hasOwn(state.idempotencyKeys, key)) return undefined
  if (state.status !== 'active' || caller.now >= state.expiresAt) throw new ConflictError('Session is not active')
  return state
}

const addSeconds = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString()

export const session: Decider<SessionCommand, Session, SessionEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { SessionStarted, MessageReceived, TurnCompleted, TurnFailed, SessionExpired, OutsideCallAnswered, OutsideEventReceived, TimerFired },

  decide(command, state) {
    switch (command.type) {
      case 'StartSession': {
        if (state.status !== 'none') throw new ConflictError(`session ${command.data.sessionId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'SessionStarted', data: { ...rest, startedAt: now, expiresAt: addSeconds(now, rest.ttlSeconds) } }]
      }
      case 'ReceiveMessage': {
        const { data } = command
        const active = receiving(state, data, data.idempotencyKey === null ? null : messageKey(data.idempotencyKey))
        if (!active) return []
        // Forward only: a turn waiting with a timer may have moved the expiry past now + ttl.
        const slid = addSeconds(data.now, active.ttlSeconds)
        return [
          {
            type: 'MessageReceived',
            data: {
              sessionId: data.sessionId,
              messageId: data.messageId,
              message: data.message,
              idempotencyKey: data.idempotencyKey,
              receivedAt: data.now,
              expiresAt: slid > active.expiresAt ? slid : active.expiresAt,
            },
          },
        ]
      }
      case 'CompleteTurn': {
        // A turn for anything but the oldest pending trigger was already taken by another worker.
        if (state.status === 'none' || state.pending[0]?.messageId !== command.data.messageId) return []
        const { sessionId, messageId, output, now, timeZone, aiConnections } = command.data
        const until = output.status === 'active' ? output.state.waitingAt?.until : undefined
        const waitExpiry = until === undefined ? undefined : addSeconds(until, state.ttlSeconds)
        const expiresAt = waitExpiry !== undefined && waitExpiry > state.expiresAt ? { expiresAt: waitExpiry } : {}
        const inputs = { ...(timeZone !== undefined && { timeZone }), ...(aiConnections !== undefined && { aiConnections }) }
        return [{ type: 'TurnCompleted', data: { sessionId, messageId, output, completedAt: now, ...inputs, ...expiresAt } }]
      }
      case 'FailTurn': {
        const { sessionId, messageId, reason, now } = command.data
        if (state.status === 'none' || state.pending[0]?.messageId !== messageId) return []
        const timestamp = Math.max(Date.parse(now) * 1000, state.conversation.lastTimestampMicros + 1)
        return [{ type: 'TurnFailed', data: { sessionId, messageId, reason, failedAt: now, timestamp } }]
      }
      case 'ExpireSession':
        if (state.status !== 'active' || command.data.now < state.expiresAt) return []
        return [{ type: 'SessionExpired', data: { sessionId: command.data.sessionId, expiredAt: command.data.now } }]
      case 'ReceiveEvent': {
        const { data } = command
        const active = receiving(state, data, data.idempotencyKey === null ? null : eventKey(data.idempotencyKey))
        if (!active) return []
        const kept = (active.conversation.inbox?.length ?? 0) + active.pending.filter((p) => p.trigger.type === 'event').length
        if (kept >= EVENTS_KEPT) throw new ConflictError(`the session holds ${EVENTS_KEPT} events no node has waited for yet; post again once the flow has taken some`)
        const { sessionId, messageId, event, idempotencyKey, now } = data
        return [{ type: 'OutsideEventReceived', data: { sessionId, messageId, event, idempotencyKey, receivedAt: now } }]
      }
      case 'FireTimer': {
        const { sessionId, messageId, nodeId, until, now } = command.data
        const waiting = state.status === 'active' ? state.conversation.waitingAt : null
        if (state.status !== 'active' || waiting?.nodeId !== nodeId || waiting.until !== until || now < until) return []
        if (state.pending.some((p) => p.messageId === messageId)) return []
        return [{ type: 'TimerFired', data: { sessionId, messageId, nodeId, until, firedAt: now } }]
      }
      case 'FireTimerNow': {
        const { data } = command
        const active = receiving(state, data, null)!
        if (active.previewDefinition === null) throw new ConflictError("only a preview session's timer fires on demand; a live session's fires when it is due")
        const waiting = active.conversation.waitingAt
        if (waiting?.until === undefined) throw new ConflictError('the session has no pending timer')
        const messageId = timerTriggerId(data.sessionId, waiting.nodeId, waiting.until)
        if (active.pending.some((p) => p.messageId === messageId)) return []
        return [{ type: 'TimerFired', data: { sessionId: data.sessionId, messageId, nodeId: waiting.nodeId, until: waiting.until, firedAt: data.now } }]
      }
      case 'RecordCallAnswer': {
        // Recorded once, for the turn still waiting for it; a second answer of a repeated call is dropped.
        const { sessionId, messageId, call, now } = command.data
        if (state.status === 'none' || state.pending[0]?.messageId !== messageId || state.calls.length !== call.index) return []
        return [{ type: 'OutsideCallAnswered', data: { sessionId, messageId, answeredAt: now, ...call } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SessionStarted': {
        const d = event.data
        return {
          status: 'active',
          sessionId: d.sessionId,
          workspaceId: d.workspaceId,
          organizationId: d.organizationId,
          flowId: d.flowId,
          flowVersion: d.flowVersion,
          previewDefinition: d.preview?.definition ?? null,
          externalId: d.externalId,
          apiKeyId: d.apiKeyId,
          callbackUrl: d.callbackUrl,
          ttlSeconds: d.ttlSeconds,
          startedAt: d.startedAt,
          expiresAt: d.expiresAt,
          finishedAt: null,
          conversation: { waitingAt: null, variables: d.variables, lastTimestampMicros: 0, card: null },
          pending: [{ messageId: d.messageId, trigger: { type: 'start' } }],
          calls: [],
          transcript: [],
          modelUsage: NO_MODEL_USAGE,
          idempotencyKeys: {},
          warnings: 0,
          failureReason: null,
        }
      }
      case 'MessageReceived': {
        if (state.status === 'none') return state
        const { messageId, message, idempotencyKey, expiresAt } = event.data
        return {
          ...state,
          expiresAt,
          pending: [...state.pending, { messageId, trigger: { type: 'message', message } }],
          idempotencyKeys: idempotencyKey === null ? state.idempotencyKeys : { ...state.idempotencyKeys, [messageKey(idempotencyKey)]: messageId },
        }
      }
      case 'TurnCompleted': {
        if (state.status === 'none') return state
        const { output, completedAt, messageId } = event.data
        const status: SessionStatus = state.status !== 'active' ? state.status : output.status
        const trigger = state.pending.find((p) => p.messageId === messageId)?.trigger
        return {
          ...state,
          expiresAt: event.data.expiresAt ?? state.expiresAt,
          status,
          finishedAt: status !== 'active' && state.finishedAt === null ? completedAt : state.finishedAt,
          conversation: output.state,
          pending: state.pending.filter((p) => p.messageId !== messageId),
          calls: [],
          transcript: trigger ? extendedTranscript(state.transcript, trigger, output.messages) : state.transcript,
          modelUsage: addedModelUsage(state.modelUsage, output.modelCalls ?? []),
          warnings: state.warnings + output.warnings.length,
        }
      }
      case 'TurnFailed': {
        if (state.status === 'none') return state
        const { failedAt, timestamp, reason } = event.data
        // The session is over: no later trigger gets a turn.
        return {
          ...state,
          status: state.status === 'active' ? 'error' : state.status,
          finishedAt: state.finishedAt ?? failedAt,
          conversation: { ...state.conversation, waitingAt: null, lastTimestampMicros: timestamp },
          pending: [],
          calls: [],
          failureReason: reason,
        }
      }
      case 'SessionExpired':
        if (state.status !== 'active') return state
        return { ...state, status: 'timeout', finishedAt: event.data.expiredAt }
      case 'OutsideEventReceived': {
        if (state.status === 'none') return state
        const { messageId, event: posted, idempotencyKey } = event.data
        return {
          ...state,
          pending: [...state.pending, { messageId, trigger: { type: 'event', event: posted } }],
          idempotencyKeys: idempotencyKey === null ? state.idempotencyKeys : { ...state.idempotencyKeys, [eventKey(idempotencyKey)]: messageId },
        }
      }
      case 'TimerFired': {
        if (state.status === 'none') return state
        const { messageId, nodeId, until } = event.data
        return { ...state, pending: [...state.pending, { messageId, trigger: { type: 'timer', nodeId, until } }] }
      }
      case 'OutsideCallAnswered': {
        if (state.status === 'none') return state
        const { index, nodeId, request, answer, durationMs } = event.data
        return { ...state, calls: [...state.calls, { index, nodeId, request, answer, durationMs }] }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
