import { card, cardStream } from '../domain/card.js'
import type { KanbanAction } from '../engine/turn.js'
import { AppError } from '../errors.js'
import type { CommandContext } from './context.js'
import { loadState } from './handle.js'
import { createCard, updateCard } from './kanban.js'

export interface SessionTurn {
  sessionId: string
  workspaceId: string
  organizationId: string
  messageId: string
}

/**
 * Carries out a turn's kanbanMove actions on the card streams. It may run again for the same turn
 * (after a crash), so a card the turn already created is not created twice, and a repeated move
 * changes nothing. Values are merged and tags added. An action the pipeline refuses (a stage since removed, a value of the wrong type)
 * is logged and skipped: the conversation has already moved on.
 */
export async function applySessionKanban(ctx: CommandContext, turn: SessionTurn, actions: readonly KanbanAction[]): Promise<void> {
  const scope = { workspaceId: turn.workspaceId, organizationId: turn.organizationId }
  const turnCtx: CommandContext = { ...ctx, metadata: { ...ctx.metadata, workspaceId: turn.workspaceId, causationId: turn.messageId } }
  for (const action of actions) {
    try {
      const existing = await loadState(ctx.store, card, cardStream(action.cardId))
      if (action.action === 'create' && existing.status === 'none') {
        await createCard(turnCtx, scope, action.pipelineId, { cardId: action.cardId, stageId: action.stageId, values: action.values, tags: action.tags, sessionId: turn.sessionId })
      } else if (existing.status === 'active') {
        // A flow adds tags to its card; it never takes away tags people put there.
        const tags = [...new Set([...existing.tags, ...action.tags])]
        await updateCard(turnCtx, scope, action.cardId, { stageId: action.stageId, values: action.values, tags })
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      ctx.logger.warn({ sessionId: turn.sessionId, cardId: action.cardId, reason: error.message }, 'kanbanMove could not be applied to the card')
    }
  }
}
