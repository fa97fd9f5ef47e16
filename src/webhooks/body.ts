import type { OutgoingMessage } from '../domain/flow-definition.js'
import type { KanbanAction, TurnFunction, TurnOutput } from '../engine/turn.js'

/** A kanban domain event as the webhook carries it (spec §6.5). */
export interface KanbanDomainEvent {
  domain: 'kanban'
  type: 'card.created' | 'card.stage.changed' | 'card.updated' | 'card.deleted'
  payload: Record<string, unknown>
  timestamp: number
}

export type WebhookChange =
  | { field: 'messages'; value: { messages: OutgoingMessage[] } }
  | { field: 'function'; value: { functions: TurnFunction[] } }
  | { field: 'event'; value: { events: KanbanDomainEvent[] } }

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
