import t from 'tap'
import { card, cardStream, type CardEvent, type CardValues } from '../../src/domain/card.js'
import { pipeline, pipelineStream, type PipelineEvent } from '../../src/domain/pipeline.js'
import { cardsProjection } from '../../src/projections/cards.js'
import { projectionSpec } from '../helpers/projection-spec.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const pipelineId = '0190a0b0-0000-7000-8000-000000000701'
const [lead, won] = ['0190a0b0-0000-7000-8000-000000000711', '0190a0b0-0000-7000-8000-000000000712'] as const
const [amount, company] = ['0190a0b0-0000-7000-8000-000000000721', '0190a0b0-0000-7000-8000-000000000722'] as const
const [first, second] = ['0190a0b0-0000-7000-8000-000000000901', '0190a0b0-0000-7000-8000-000000000902'] as const
const session = '0190a0b0-0000-7000-8000-000000000a01'
const createdAt = '2026-01-01T00:00:00.000Z'
const later = '2026-01-02T09:00:00.000Z'

const created = (cardId: string, values: CardValues, tags: string[], stageId: string = lead): CardEvent => ({
  type: 'CardCreated',
  data: { cardId, pipelineId, workspaceId: ws, stageId, sessionId: session, values, tags, createdAt },
})
const updated = (cardId: string, values: CardValues, tags: string[]): CardEvent => ({
  type: 'CardUpdated',
  data: { cardId, pipelineId, stageId: lead, sessionId: session, changedFieldIds: Object.keys(values), tagsChanged: true, values, tags, updatedAt: later },
})
const moved = (cardId: string, tags: string[]): CardEvent => ({
  type: 'CardStageChanged',
  data: { cardId, pipelineId, stageId: won, previousStageId: lead, sessionId: session, tags, movedAt: later },
})
const deleted = (cardId: string, tags: string[]): CardEvent => ({ type: 'CardDeleted', data: { cardId, pipelineId, stageId: lead, sessionId: session, tags, deletedAt: later } })
const fieldRemoved = (fieldId: string): PipelineEvent => ({
  type: 'PipelineUpdated',
  data: {
    pipelineId,
    workspaceId: ws,
    name: 'Sales',
    stages: [
      { id: lead, pipelineId, name: 'Lead', order: 0, color: '#3366ff' },
      { id: won, pipelineId, name: 'Won', order: 1, color: '#33aa55' },
    ],
    fields: [],
    removedStageIds: [],
    removedFieldIds: [fieldId],
    updatedAt: later,
  },
})

/** The totals kept for the cards of one stage: per tag ('' for every card), how many and the sum of their amounts. */
const totals = (stageId: string, byTag: Record<string, readonly [n: number, amounts: string]>) => ({
  kanban_card_counts: Object.entries(byTag).map(([tag, [n]]) => ({ stage_id: stageId, tag, n })),
  kanban_card_sums: Object.entries(byTag).map(([tag, [, total]]) => ({ stage_id: stageId, tag, field_id: amount, total })),
})

t.test('the cards read model', async (t) => {
  const { given } = projectionSpec(t, cardsProjection, {
    streamOf: (event: CardEvent | PipelineEvent) => ('cardId' in event.data ? cardStream(event.data.cardId) : pipelineStream(event.data.pipelineId)),
    schemas: { ...card.eventSchemas, ...pipeline.eventSchemas },
  })

  await given(created(first, { [amount]: 120, [company]: 'Acme' }, ['vip'])).then(
    {
      kanban_cards: [
        { id: first, pipeline_id: pipelineId, workspace_id: ws, stage_id: lead, session_id: session, tags: ['vip'], field_values: { [amount]: 120, [company]: 'Acme' }, created_at: createdAt, moved_at: createdAt },
      ],
      ...totals(lead, { '': [1, '120'], vip: [1, '120'] }),
    },
    'a created card is counted in its stage, once among all cards and once per tag, and its numbers summed the same way',
  )
  await given(created(first, { [amount]: 120 }, ['vip']), updated(first, { [amount]: 80, [company]: 'Acme' }, ['late'])).then(
    {
      kanban_cards: [{ id: first, stage_id: lead, tags: ['late'], field_values: { [amount]: 80, [company]: 'Acme' }, moved_at: createdAt }],
      ...totals(lead, { '': [1, '80'], late: [1, '80'] }),
    },
    'an update replaces values and tags, and the totals follow them',
  )
  await given(created(first, { [amount]: 120 }, ['vip']), moved(first, ['vip'])).then(
    {
      kanban_cards: [{ id: first, stage_id: won, created_at: createdAt, moved_at: later }],
      ...totals(won, { '': [1, '120'], vip: [1, '120'] }),
    },
    'a move changes the stage and moved_at, and takes the card’s totals to the new stage',
  )
  await given(created(first, { [amount]: 120 }, ['vip']), created(second, { [amount]: 30 }, []), deleted(first, ['vip'])).then(
    { kanban_cards: [{ id: second }], ...totals(lead, { '': [1, '30'] }) },
    'a deleted card leaves no row and no longer counts',
  )
  await given(created(first, { [amount]: 120 }, ['vip']), created(second, { [amount]: 30 }, ['vip'])).then(
    totals(lead, { '': [2, '150'], vip: [2, '150'] }),
    'cards of one stage and tag add up',
  )
  await given(created(first, { [amount]: 120, [company]: 'Acme' }, []), created(second, { [company]: 'Initech' }, []), fieldRemoved(amount)).then(
    {
      kanban_cards: [
        { id: first, field_values: { [company]: 'Acme' } },
        { id: second, field_values: { [company]: 'Initech' } },
      ],
      kanban_card_sums: [],
    },
    'a field removed from the pipeline takes its values off every card, and out of the sums',
  )
})
