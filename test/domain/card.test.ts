import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { MAX_TAGS, Tags, addTags, card, type CardCommand, type CardEvent } from '../../src/domain/card.js'
import type { Decider, DomainEvent } from '../../src/domain/decider.js'
import { pipeline, type Field, type Pipeline, type PipelineCommand, type PipelineEvent, type Stage } from '../../src/domain/pipeline.js'
import { BadRequestError, ConflictError, NotFoundError } from '../../src/errors.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const pipelineId = '0190a0b0-0000-7000-8000-000000000301'
const lead = '0190a0b0-0000-7000-8000-000000000311'
const won = '0190a0b0-0000-7000-8000-000000000312'
const company = '0190a0b0-0000-7000-8000-000000000321'
const amount = '0190a0b0-0000-7000-8000-000000000322'
const cardId = '0190a0b0-0000-7000-8000-000000000401'
const created = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const stage = (id: string, name: string, order: number): Stage => ({ id, pipelineId, name, order, color: '#9E9E9E' })
const field = (id: string, name: string, type: Field['type'], required = false): Field => ({
  id,
  name,
  type,
  required,
  isFeatured: false,
  order: 0,
  options: null,
  currency: type === 'currency' ? 'BRL' : null,
})

const pipelineCreated: Extract<PipelineEvent, { type: 'PipelineCreated' }> = {
  type: 'PipelineCreated',
  data: { pipelineId, workspaceId: ws, name: 'Deals', stages: [stage(lead, 'Lead', 0), stage(won, 'Won', 1)], fields: [field(company, 'Company', 'text'), field(amount, 'Amount', 'currency')], createdAt: created },
}
const { createdAt: _createdAt, ...definition } = pipelineCreated.data
const pipelineUpdated = (fields: Field[], removedFieldIds: string[] = []): PipelineEvent => ({
  type: 'PipelineUpdated',
  data: { ...definition, fields, removedStageIds: [], removedFieldIds, updatedAt: now },
})
const fold = <S, E extends DomainEvent>(decider: Decider<unknown, S, E>, events: E[]) => events.reduce(decider.evolve, decider.initialState)
const deals = (...later: PipelineEvent[]): Pipeline => fold(pipeline, [pipelineCreated, ...later])

const checked = <E extends DomainEvent>(schemas: Record<string, TSchema>, events: E[]) => {
  for (const event of events) {
    const check = TypeCompiler.Compile(schemas[event.type]!)
    if (!check.Check(event.data)) throw new Error(`${event.type} breaks its schema: ${check.Errors(event.data).First()?.message}`)
  }
  return events
}
const givenCard = (...history: CardEvent[]) => ({ when: (command: CardCommand) => checked(card.eventSchemas, card.decide(command, fold(card, history))) })
const givenPipeline = (...history: PipelineEvent[]) => ({ when: (command: PipelineCommand) => checked(pipeline.eventSchemas, pipeline.decide(command, fold(pipeline, history))) })

const cardCreated: CardEvent = {
  type: 'CardCreated',
  data: { cardId, pipelineId, workspaceId: ws, stageId: lead, sessionId: null, values: { [company]: 'Acme', [amount]: 10 }, tags: ['vip'], createdAt: created },
}
const update = (data: Partial<Extract<CardCommand, { type: 'UpdateCard' }>['data']>): CardCommand => ({ type: 'UpdateCard', data: { cardId, workspaceId: ws, pipeline: deals(), now, ...data } })

t.test('CreateCard', async (t) => {
  const create = (data: Partial<Extract<CardCommand, { type: 'CreateCard' }>['data']> = {}): CardCommand => ({
    type: 'CreateCard',
    data: { cardId, workspaceId: ws, pipelineId, pipeline: deals(), stageId: lead, sessionId: null, values: { [company]: 'Acme', [amount]: 10 }, tags: ['vip'], now: created, ...data },
  })
  t.same(givenCard().when(create()), [cardCreated])
  t.throws(() => givenCard(cardCreated).when(create()), ConflictError, 'the same id twice')
  t.throws(() => givenCard().when(create({ workspaceId: otherWs })), NotFoundError, 'a pipeline of another workspace')
  t.throws(() => givenCard().when(create({ pipeline: pipeline.initialState })), NotFoundError, 'no such pipeline')
  t.throws(() => givenCard().when(create({ stageId: company })), BadRequestError, 'a stage of no pipeline')
  t.throws(() => givenCard().when(create({ values: { [amount]: Number.NaN } })), /field "Amount" \(currency\) takes a number/, 'NaN is not a number')
  t.throws(() => givenCard().when(create({ values: { [company]: 'x'.repeat(10_001) } })), /at most 10000 characters/)
})

t.test('UpdateCard', async (t) => {
  t.same(givenCard(cardCreated).when(update({ values: { [amount]: 10 }, tags: ['vip'], stageId: lead })), [], 'nothing changes, nothing happens')
  t.same(
    givenCard(cardCreated).when(update({ values: { [amount]: 20 }, stageId: won })),
    [
      { type: 'CardUpdated', data: { cardId, pipelineId, stageId: lead, sessionId: null, changedFieldIds: [amount], tagsChanged: false, values: { [company]: 'Acme', [amount]: 20 }, tags: ['vip'], updatedAt: now } },
      { type: 'CardStageChanged', data: { cardId, pipelineId, stageId: won, previousStageId: lead, sessionId: null, tags: ['vip'], movedAt: now } },
    ],
    'values first, then the move',
  )
  t.same(
    givenCard(cardCreated).when(update({ tags: [] })),
    [{ type: 'CardUpdated', data: { cardId, pipelineId, stageId: lead, sessionId: null, changedFieldIds: [], tagsChanged: true, values: { [company]: 'Acme', [amount]: 10 }, tags: [], updatedAt: now } }],
  )
  t.throws(() => givenCard().when(update({ tags: [] })), NotFoundError, 'no such card')
  t.throws(() => givenCard(cardCreated).when(update({ workspaceId: otherWs })), NotFoundError, 'a card of another workspace')

  const madeRequired = pipelineUpdated([field(company, 'Company', 'text'), field(amount, 'Amount', 'currency', true), field(won, 'Seats', 'number', true)])
  const later = givenCard(cardCreated).when(update({ pipeline: deals(madeRequired), values: { [company]: 'Acme Inc' } }))
  t.same(later[0]?.type, 'CardUpdated', 'a field made required later does not block other changes')
  t.throws(() => givenCard(cardCreated).when(update({ pipeline: deals(madeRequired), values: { [amount]: null } })), /field "Amount" is required and cannot be cleared/)

  const amountRemoved = pipelineUpdated([field(company, 'Company', 'text')], [amount])
  t.same(
    givenCard(cardCreated).when(update({ pipeline: deals(amountRemoved), tags: ['x'] }))[0]?.data,
    { cardId, pipelineId, stageId: lead, sessionId: null, changedFieldIds: [], tagsChanged: true, values: { [company]: 'Acme' }, tags: ['x'], updatedAt: now },
    'values of removed fields are not carried forward',
  )
  t.same(givenCard(cardCreated).when(update({ pipeline: deals(amountRemoved) })), [], 'dropping them alone is no change: the read model dropped them with the field')
})

t.test('DeleteCard', async (t) => {
  const remove = (workspaceId = ws): CardCommand => ({ type: 'DeleteCard', data: { cardId, workspaceId, now } })
  const deleted: CardEvent = { type: 'CardDeleted', data: { cardId, pipelineId, stageId: lead, sessionId: null, tags: ['vip'], deletedAt: now } }
  t.same(givenCard(cardCreated).when(remove()), [deleted])
  t.throws(() => givenCard(cardCreated, deleted).when(remove()), NotFoundError, 'deleted already')
  t.throws(() => givenCard(cardCreated).when(remove(otherWs)), NotFoundError, 'a card of another workspace')
  t.same(fold(card, [cardCreated, deleted]), { status: 'deleted' })
})

t.test('UpdatePipeline', async (t) => {
  const change = (data: Partial<Extract<PipelineCommand, { type: 'UpdatePipeline' }>['data']>): PipelineCommand => ({
    type: 'UpdatePipeline',
    data: { pipelineId, workspaceId: ws, stagesHoldingCards: [], now, ...data },
  })
  const keepLead = [{ id: lead, isNew: false, name: 'Lead', order: 0 }]
  t.throws(() => givenPipeline(pipelineCreated).when(change({ stages: keepLead, stagesHoldingCards: [won] })), ConflictError, 'Won holds cards')
  t.same(givenPipeline(pipelineCreated).when(change({ stages: keepLead, stagesHoldingCards: [lead] }))[0]?.data, {
    ...definition,
    stages: [stage(lead, 'Lead', 0)],
    removedStageIds: [won],
    removedFieldIds: [],
    updatedAt: now,
  }, 'an occupied stage that stays is no obstacle')
  t.same(givenPipeline(pipelineCreated).when(change({ name: 'Deals' })), [], 'the same name changes nothing')
  t.throws(() => givenPipeline(pipelineCreated).when(change({ workspaceId: otherWs, name: 'x' })), NotFoundError, 'a pipeline of another workspace')
  t.throws(() => givenPipeline().when(change({ name: 'x' })), NotFoundError, 'no such pipeline')
  const fields = [{ id: company, isNew: false, name: 'Company', type: 'text' as const }]
  t.same(givenPipeline(pipelineCreated).when(change({ fields }))[0]?.data, { ...definition, fields: [field(company, 'Company', 'text')], removedStageIds: [], removedFieldIds: [amount], updatedAt: now })
  t.throws(() => givenPipeline(pipelineCreated).when(change({ fields: [{ ...fields[0]!, type: 'number' }] })), ConflictError, 'a field changing its type')
})

t.test('addTags', async (t) => {
  const tagsCheck = TypeCompiler.Compile(Tags)
  t.same(addTags(['vip', 'late'], ['late', 'new', 'new']), { tags: ['vip', 'late', 'new'], dropped: [] }, 'the card keeps its own, in order, and gets no repeats')
  t.same(addTags([], ['a,b', ' x', 'y ', '', 'x'.repeat(101), 'ok']), { tags: ['ok'], dropped: ['a,b', ' x', 'y ', '', 'x'.repeat(101)] }, 'what a tag may not be is left out')
  const own = Array.from({ length: MAX_TAGS - 5 }, (_, i) => `own-${i}`)
  const added = ['own-0', ...Array.from({ length: 10 }, (_, i) => `flow-${i}`)]
  const merged = addTags(own, added)
  t.same(merged.tags, [...own, 'flow-0', 'flow-1', 'flow-2', 'flow-3', 'flow-4'], `the card's own first, then new ones up to ${MAX_TAGS}`)
  t.same(merged.dropped, ['flow-5', 'flow-6', 'flow-7', 'flow-8', 'flow-9'])
  t.ok(tagsCheck.Check(merged.tags), 'the result passes Tags')
})
