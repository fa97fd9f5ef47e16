import { addTags, card, cardStream, type ActiveCard, type Card, type CardCommand, type CardEvent } from '../domain/card.js'
import { pipeline, pipelineStream, type Pipeline } from '../domain/pipeline.js'
import type { KanbanAction } from '../domain/turn.js'
import { AppError, ConflictError } from '../errors.js'
import { comparePositions, WrongExpectedVersionError, type Position, type RecordedEvent } from '../eventstore/port.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand, loadState } from './handle.js'

export interface SessionTurn {
  sessionId: string
  workspaceId: string
  organizationId: string
  messageId: string
  /** Where the turn's `TurnCompleted` is in the log. */
  position: Position
}

const MAX_ATTEMPTS = 10

/**
 * Carries out a turn's kanbanMove actions on the card streams. Every card event it writes names
 * the turn (`causationId`, the messageId) and the action (`kanbanAction`, its place in the turn's
 * list). It may run again for the same turn (after a crash), and then leaves the card as it is
 * now: an action whose events are in the card's stream, or that changed nothing on the card as it
 * was at the turn while others have changed it since, is done; a create that finds its card
 * (made by this turn: the id comes from it) does nothing.
 *
 * Values are merged and tags added, within the card's tag rules (`addTags`). An action the
 * pipeline refuses (a stage since removed, a value of the wrong type) is logged and skipped: the
 * conversation has already moved on.
 */
export async function applySessionKanban(ctx: CommandContext, turn: SessionTurn, actions: readonly KanbanAction[]): Promise<void> {
  for (const [index, action] of actions.entries()) {
    const actionCtx: CommandContext = { ...ctx, metadata: { ...ctx.metadata, workspaceId: turn.workspaceId, causationId: turn.messageId, kanbanAction: index } }
    try {
      await applyAction(actionCtx, turn, action, index)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      ctx.logger.warn({ sessionId: turn.sessionId, cardId: action.cardId, reason: error.message }, 'kanbanMove could not be applied to the card')
    }
  }
}

async function applyAction(ctx: CommandContext, turn: SessionTurn, action: KanbanAction, index: number): Promise<void> {
  const stream = cardStream(action.cardId)
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const recorded = await ctx.store.readStream(stream)
    const current = fold(recorded)
    const pipelineState = await loadState(ctx.store, pipeline, pipelineStream(current.status === 'active' ? current.pipelineId : action.pipelineId))
    const next = kanbanCommand({ turn, action, index, recorded, pipeline: pipelineState, now: ctx.now().toISOString() })
    if (!next) return
    try {
      // Decided on the revision checked above: an event landing in between means checking again.
      const result = await handleCommand(ctx.store, card, stream, next.command, ctx.metadata, { onlyAt: recorded.at(-1)?.revision ?? 'no_stream' })
      await awaitReadModels(ctx, result)
      if (next.droppedTags.length > 0) {
        ctx.logger.warn({ sessionId: turn.sessionId, cardId: action.cardId, droppedTags: next.droppedTags }, 'kanbanMove tags the card cannot hold were left out')
      }
      return
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error
    }
  }
  throw new ConflictError(`${stream} is being changed concurrently`)
}

const fold = (events: readonly RecordedEvent[]): Card => events.reduce((state, e) => card.evolve(state, { type: e.type, data: e.data } as CardEvent), card.initialState)

/**
 * The command that carries out a turn's `index`th action on the card its stream (`recorded`)
 * tells, in `pipeline` (the card's); undefined when nothing is left to do. Pure.
 */
export function kanbanCommand({
  turn,
  action,
  index,
  recorded,
  pipeline: pipelineState,
  now,
}: {
  turn: SessionTurn
  action: KanbanAction
  index: number
  recorded: readonly RecordedEvent[]
  pipeline: Pipeline
  now: string
}): { command: CardCommand; droppedTags: string[] } | undefined {
  const byThisTurn = (e: RecordedEvent) => e.metadata.causationId === turn.messageId
  // Actions run in order, so an event of this action or of a later one of the turn means this one ran.
  if (recorded.some((e) => byThisTurn(e) && Number(e.metadata.kanbanAction) >= index)) return undefined
  const { cardId, stageId, values } = action
  if (action.action === 'create') {
    if (recorded.length > 0) return undefined
    const { tags, dropped } = addTags([], action.tags)
    const command: CardCommand = {
      type: 'CreateCard',
      data: { cardId, workspaceId: turn.workspaceId, pipelineId: action.pipelineId, pipeline: pipelineState, stageId, sessionId: turn.sessionId, values, tags, now },
    }
    return { command, droppedTags: dropped }
  }
  const current = fold(recorded)
  if (current.status !== 'active') return undefined
  const update = (on: ActiveCard) => {
    // A flow adds tags to its card; it never takes away tags people put there.
    const { tags, dropped } = addTags(on.tags, action.tags)
    const command: CardCommand = { type: 'UpdateCard', data: { cardId, workspaceId: turn.workspaceId, pipeline: pipelineState, stageId, values, tags, now } }
    return { command, droppedTags: dropped }
  }
  // Changed since the turn by someone else: an action that changes nothing on the card as it was at
  // the turn may have run already, leaving no event, and must not undo those changes.
  const since = recorded.filter((e) => comparePositions(e.position, turn.position) > 0 && !byThisTurn(e))
  if (since.length > 0) {
    const atTurn = fold(recorded.filter((e) => !since.includes(e)))
    if (atTurn.status === 'active' && card.decide(update(atTurn).command, atTurn).length === 0) return undefined
  }
  return update(current)
}
