import { CARD_STREAM_PREFIX, card, cardStream, type Card, type ValuesPatch } from '../domain/card.js'
import { pipeline, pipelineStream, reachablePipeline, type FieldInput, type Pipeline, type StageInput } from '../domain/pipeline.js'
import { newId } from '../ids.js'
import { cardRecord, stagesHoldingCards, type CardRecord } from '../projections/cards.js'
import { pipelineRecord, type PipelineRecord } from '../projections/pipelines.js'
import { findWorkspace } from '../projections/workspaces.js'
import type { DbOrTrx } from '../store/database.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand, loadState } from './handle.js'
import type { Scope } from './sectors.js'

/** Kanban commands also read the read models: the workspace's name and which stages hold cards. */
export interface KanbanContext extends CommandContext {
  db: DbOrTrx
}

/** A stage or field as a request gives it: with the `id` of an existing one to keep it, without to add one. */
export type StageRequest = Omit<StageInput, 'id' | 'isNew'> & { id?: string }
export type FieldRequest = Omit<FieldInput, 'id' | 'isNew'> & { id?: string }

const withIds = <T extends { id?: string }>(items: T[]) => items.map((item) => ({ ...item, id: item.id ?? newId(), isNew: item.id === undefined }))

async function toPipelineRecord(ctx: KanbanContext, state: Pipeline): Promise<PipelineRecord> {
  if (state.status !== 'active') throw new Error('the pipeline is not active after its command')
  const workspace = await findWorkspace(ctx.db, state.workspaceId)
  if (!workspace) throw new Error(`workspace ${state.workspaceId} of pipeline ${state.id} is not in the read model`)
  return pipelineRecord(state, workspace.name)
}

export async function createPipeline(
  ctx: KanbanContext,
  scope: Scope,
  input: { name: string; stages: StageRequest[]; fields?: FieldRequest[] },
): Promise<PipelineRecord> {
  const pipelineId = newId()
  const result = await handleCommand(ctx.store, pipeline, pipelineStream(pipelineId), {
    type: 'CreatePipeline',
    data: { pipelineId, workspaceId: scope.workspaceId, name: input.name, stages: withIds(input.stages), fields: withIds(input.fields ?? []), now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return toPipelineRecord(ctx, result.state)
}

/**
 * Renames a pipeline or replaces its stages or fields. A stage that still holds cards cannot be
 * removed; that is checked against the cards read model once it has caught up with every card
 * event written so far.
 */
export async function updatePipeline(
  ctx: KanbanContext,
  scope: Scope,
  pipelineId: string,
  input: { name?: string; stages?: StageRequest[]; fields?: FieldRequest[] },
): Promise<PipelineRecord> {
  let occupied: string[] = []
  if (input.stages) {
    const current = reachablePipeline(await loadState(ctx.store, pipeline, pipelineStream(pipelineId)), pipelineId, scope.workspaceId)
    // Every card stream: wait until the cards read model holds each card written before this request.
    const head = await ctx.store.headPosition({ streamPrefixes: [CARD_STREAM_PREFIX] })
    await awaitReadModels(ctx, { stream: CARD_STREAM_PREFIX, position: head })
    occupied = await stagesHoldingCards(ctx.db, pipelineId, current.stages.map((s) => s.id))
  }
  const result = await handleCommand(ctx.store, pipeline, pipelineStream(pipelineId), {
    type: 'UpdatePipeline',
    data: {
      pipelineId,
      workspaceId: scope.workspaceId,
      name: input.name,
      stages: input.stages && withIds(input.stages),
      fields: input.fields && withIds(input.fields),
      stagesHoldingCards: occupied,
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return toPipelineRecord(ctx, result.state)
}

function toCardRecord(state: Card): CardRecord {
  if (state.status !== 'active') throw new Error('the card is not active after its command')
  return cardRecord(state)
}

export async function createCard(
  ctx: CommandContext,
  scope: Scope,
  pipelineId: string,
  input: { stageId: string; values?: ValuesPatch; tags?: string[]; sessionId?: string | null; cardId?: string },
): Promise<CardRecord> {
  const cardId = input.cardId ?? newId()
  const result = await handleCommand(ctx.store, card, cardStream(cardId), {
    type: 'CreateCard',
    data: {
      cardId,
      workspaceId: scope.workspaceId,
      pipelineId,
      pipeline: await loadState(ctx.store, pipeline, pipelineStream(pipelineId)),
      stageId: input.stageId,
      sessionId: input.sessionId ?? null,
      values: input.values ?? {},
      tags: input.tags ?? [],
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return toCardRecord(result.state)
}

/** Merges `values` (null clears one), replaces `tags`, and moves the card when `stageId` names another stage. */
export async function updateCard(
  ctx: CommandContext,
  scope: Scope,
  cardId: string,
  input: { stageId?: string; values?: ValuesPatch; tags?: string[] },
): Promise<CardRecord> {
  const current = await loadState(ctx.store, card, cardStream(cardId))
  const result = await handleCommand(ctx.store, card, cardStream(cardId), {
    type: 'UpdateCard',
    data: {
      cardId,
      workspaceId: scope.workspaceId,
      pipeline: current.status === 'active' ? await loadState(ctx.store, pipeline, pipelineStream(current.pipelineId)) : pipeline.initialState,
      ...input,
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return toCardRecord(result.state)
}

export async function deleteCard(ctx: CommandContext, scope: Scope, cardId: string): Promise<void> {
  const result = await handleCommand(ctx.store, card, cardStream(cardId), {
    type: 'DeleteCard',
    data: { cardId, workspaceId: scope.workspaceId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}
