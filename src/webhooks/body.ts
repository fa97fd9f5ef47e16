import type { CardEvent } from '../domain/card.js'
import type { OutgoingMessage } from '../domain/flow-definition.js'
import type { TurnFailureReason } from '../domain/session.js'
import type { KanbanAction, TurnFunction, TurnOutput } from '../engine/turn.js'

/** A kanban domain event as the webhook carries it (spec §6.5). */
export interface KanbanDomainEvent {
  domain: 'kanban'
  type: 'card.created' | 'card.stage.changed' | 'card.updated' | 'card.deleted'
  payload: Record<string, unknown>
  timestamp: number
}

/** A session's end in error: the engine could not complete a turn (our own domain beside the spec's `kanban`). */
export interface SessionDomainEvent {
  domain: 'session'
  type: 'session.failed'
  payload: { reason: TurnFailureReason }
  timestamp: number
}

export type WebhookChange =
  | { field: 'messages'; value: { messages: OutgoingMessage[] } }
  | { field: 'function'; value: { functions: TurnFunction[] } }
  | { field: 'event'; value: { events: (KanbanDomainEvent | SessionDomainEvent)[] } }

export interface WebhookBody {
  sessionId: string
  messageId: string
  changes: WebhookChange[]
}

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
