import { Type, type Static } from '@sinclair/typebox'
import type { CardEvent } from '../domain/card.js'
import { OutgoingMessage } from '../domain/flow-definition.js'
import { TurnFailureReason } from '../domain/session.js'
import { TurnFunction, type KanbanAction, type TurnOutput } from '../domain/turn.js'

// The body of every webhook, as a schema: the OpenAPI document describes it (`webhooks`), and the
// typed client (client/) gives integrators its type and a verifier.

/** A kanban domain event as the webhook carries it (spec §6.5). */
export const KanbanDomainEvent = Type.Object({
  domain: Type.Literal('kanban'),
  type: Type.Union([Type.Literal('card.created'), Type.Literal('card.stage.changed'), Type.Literal('card.updated'), Type.Literal('card.deleted')]),
  payload: Type.Record(Type.String(), Type.Unknown()),
  timestamp: Type.Integer({ description: 'microseconds since the epoch' }),
})
export type KanbanDomainEvent = Static<typeof KanbanDomainEvent>

/** A session's end in error: the engine could not complete a turn (our own domain beside the spec's `kanban`). */
export const SessionDomainEvent = Type.Object({
  domain: Type.Literal('session'),
  type: Type.Literal('session.failed'),
  payload: Type.Object({ reason: TurnFailureReason }),
  timestamp: Type.Integer({ description: 'microseconds since the epoch' }),
})
export type SessionDomainEvent = Static<typeof SessionDomainEvent>

export const WebhookChange = Type.Union([
  Type.Object({ field: Type.Literal('messages'), value: Type.Object({ messages: Type.Array(OutgoingMessage) }) }),
  Type.Object({ field: Type.Literal('function'), value: Type.Object({ functions: Type.Array(TurnFunction) }) }),
  Type.Object({ field: Type.Literal('event'), value: Type.Object({ events: Type.Array(Type.Union([KanbanDomainEvent, SessionDomainEvent])) }) }),
])
export type WebhookChange = Static<typeof WebhookChange>

export const WebhookBody = Type.Object(
  {
    sessionId: Type.String({ format: 'uuid' }),
    messageId: Type.String({ format: 'uuid', description: 'the inbound message (or the start) the turn answered; a card event: its event id' }),
    changes: Type.Array(WebhookChange),
  },
  { title: 'WebhookBody' },
)
export type WebhookBody = Static<typeof WebhookBody>

const toDomainEvent = (action: KanbanAction): KanbanDomainEvent =>
  action.action === 'create'
    ? { domain: 'kanban', type: 'card.created', payload: { cardId: action.cardId, pipelineId: action.pipelineId, stageId: action.stageId }, timestamp: action.timestamp }
    : {
        domain: 'kanban',
        type: 'card.stage.changed',
        payload: { cardId: action.cardId, pipelineId: action.pipelineId, stageId: action.stageId, previousStageId: action.previousStageId },
        timestamp: action.timestamp,
      }

/**
 * The webhook of one turn: its `messages`, `function` and `event` changes, in that order, only the
 * non-empty ones; undefined when the turn produced nothing to tell. A move to the stage the card
 * is already in changes no stage and is not reported as `card.stage.changed`.
 */
export function turnWebhookBody(sessionId: string, messageId: string, output: TurnOutput): WebhookBody | undefined {
  const changes: WebhookChange[] = []
  const messages = output.messages.map(({ nodeId: _nodeId, ...message }) => message as OutgoingMessage)
  if (messages.length) changes.push({ field: 'messages', value: { messages } })
  if (output.functions.length) changes.push({ field: 'function', value: { functions: output.functions } })
  const events = output.kanban.filter((a) => a.action === 'create' || a.previousStageId !== a.stageId).map(toDomainEvent)
  if (events.length) changes.push({ field: 'event', value: { events } })
  return changes.length ? { sessionId, messageId, changes } : undefined
}

/**
 * The webhook of a turn the engine could not complete: the session is finalized (`finish`, as the
 * spec has it signalled) and a `session.failed` event says why, as a reason code.
 */
export function failedTurnWebhookBody(failed: { sessionId: string; messageId: string; reason: TurnFailureReason; timestamp: number }): WebhookBody {
  const { sessionId, messageId, reason, timestamp } = failed
  return {
    sessionId,
    messageId,
    changes: [
      { field: 'function', value: { functions: [{ type: 'finish', timestamp }] } },
      { field: 'event', value: { events: [{ domain: 'session', type: 'session.failed', payload: { reason }, timestamp }] } },
    ],
  }
}

const micros = (iso: string): number => Date.parse(iso) * 1000

/** The domain event a card operation reports (spec §6.5; the payloads of the two the spec leaves open are ours). */
export function cardDomainEvent(event: CardEvent): KanbanDomainEvent {
  switch (event.type) {
    case 'CardCreated': {
      const { cardId, pipelineId, stageId, createdAt } = event.data
      return { domain: 'kanban', type: 'card.created', payload: { cardId, pipelineId, stageId }, timestamp: micros(createdAt) }
    }
    case 'CardUpdated': {
      const { cardId, pipelineId, changedFieldIds, tags, updatedAt } = event.data
      return { domain: 'kanban', type: 'card.updated', payload: { cardId, pipelineId, changedFields: changedFieldIds, tags }, timestamp: micros(updatedAt) }
    }
    case 'CardStageChanged': {
      const { cardId, pipelineId, stageId, previousStageId, movedAt } = event.data
      return { domain: 'kanban', type: 'card.stage.changed', payload: { cardId, pipelineId, stageId, previousStageId }, timestamp: micros(movedAt) }
    }
    case 'CardDeleted': {
      const { cardId, pipelineId, deletedAt } = event.data
      return { domain: 'kanban', type: 'card.deleted', payload: { cardId, pipelineId }, timestamp: micros(deletedAt) }
    }
  }
}

/**
 * The webhook of a card operation made through the API on a session's card. No inbound message
 * triggered it, so `messageId` is the id of the card event itself.
 */
export const cardWebhookBody = (sessionId: string, eventId: string, event: CardEvent): WebhookBody => ({
  sessionId,
  messageId: eventId,
  changes: [{ field: 'event', value: { events: [cardDomainEvent(event)] } }],
})
