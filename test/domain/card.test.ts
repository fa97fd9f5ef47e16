import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { MAX_TAGS, Tags, addTags, applyValues, card, cardStream, valueMisfit, type CardCommand, type CardEvent } from '../../src/domain/card.js'
import { pipeline, type Field, type PipelineEvent, type Stage } from '../../src/domain/pipeline.js'
import { BadRequestError, ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, fold, rejects, spec } from '../helpers/decider-spec.js'
import { pipelineField as field } from '../helpers/pipeline-fields.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const pipelineId = '0190a0b0-0000-7000-8000-000000000301'
const lead = '0190a0b0-0000-7000-8000-000000000311'
const won = '0190a0b0-0000-7000-8000-000000000312'
const company = '0190a0b0-0000-7000-8000-000000000321'
const amount = '0190a0b0-0000-7000-8000-000000000322'
const seats = '0190a0b0-0000-7000-8000-000000000323'
const cardId = '0190a0b0-0000-7000-8000-000000000401'
const created = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const stage = (id: string, name: string, order: number): Stage => ({ id, pipelineId, name, order, color: '#9E9E9E' })

const pipelineCreated: Extract<PipelineEvent, { type: 'PipelineCreated' }> = {
  type: 'PipelineCreated',
  data: { pipelineId, workspaceId: ws, name: 'Deals', stages: [stage(lead, 'Lead', 0), stage(won, 'Won', 1)], fields: [field(company, 'Company', 'text'), field(amount, 'Amount', 'currency')], createdAt: created },
}
const pipelineUpdated = (fields: Field[], removedFieldIds: string[] = []): PipelineEvent => {
  const { createdAt: _createdAt, ...definition } = pipelineCreated.data
  return { type: 'PipelineUpdated', data: { ...definition, fields, removedStageIds: [], removedFieldIds, updatedAt: now } }
}
/** The card's pipeline as its stream tells it, after `later` changes. */
const deals = (...later: PipelineEvent[]) => fold(pipeline, [pipelineCreated, ...later])

const cardCreated: CardEvent = {
  type: 'CardCreated',
  data: { cardId, pipelineId, workspaceId: ws, stageId: lead, sessionId: null, values: { [company]: 'Acme', [amount]: 10 }, tags: ['vip'], createdAt: created },
}
type Updated = Extract<CardEvent, { type: 'CardUpdated' }>['data']
const cardUpdated = (data: Partial<Updated>): CardEvent => ({
  type: 'CardUpdated',
  data: { cardId, pipelineId, stageId: lead, sessionId: null, changedFieldIds: [], tagsChanged: false, values: { [company]: 'Acme', [amount]: 10 }, tags: ['vip'], updatedAt: now, ...data },
})
const update = (data: Partial<Extract<CardCommand, { type: 'UpdateCard' }>['data']>): CardCommand => ({ type: 'UpdateCard', data: { cardId, workspaceId: ws, pipeline: deals(), now, ...data } })

t.test('CreateCard', async (t) => {
  const { given } = spec(t, card)
  const create = (data: Partial<Extract<CardCommand, { type: 'CreateCard' }>['data']> = {}): CardCommand => ({
    type: 'CreateCard',
    data: { cardId, workspaceId: ws, pipelineId, pipeline: deals(), stageId: lead, sessionId: null, values: { [company]: 'Acme', [amount]: 10 }, tags: ['vip'], now: created, ...data },
  })
  given().when(create()).then([cardCreated], 'a card in a stage of its pipeline')
  given(cardCreated).when(create()).thenRejects(ConflictError, 'the same id twice')
  given().when(create({ workspaceId: otherWs })).thenRejects(NotFoundError, 'a pipeline of another workspace')
  given().when(create({ pipeline: pipeline.initialState })).thenRejects(NotFoundError, 'no such pipeline')
  given().when(create({ stageId: company })).thenRejects(BadRequestError, 'a stage of no pipeline')
  given().when(create({ values: { [amount]: Number.NaN } })).thenRejects(/field "Amount" \(currency\) takes a number/, 'NaN is not a number')
  given().when(create({ values: { [company]: 'x'.repeat(10_001) } })).thenRejects(/at most 10000 characters/, 'a text past its length')
  const required = deals(pipelineUpdated([field(company, 'Company', 'text', { required: true }), field(amount, 'Amount', 'currency')]))
  given().when(create({ pipeline: required, values: { [amount]: 10 } })).thenRejects({ type: BadRequestError, message: /field "Company" is required/ }, 'a new card holds every required field')
})

t.test('UpdateCard', async (t) => {
  const { given } = spec(t, card)
  given(cardCreated).when(update({ values: { [amount]: 10 }, tags: ['vip'], stageId: lead })).thenNothing('nothing changes, nothing happens')
  given(cardCreated).when(update({ values: { [amount]: 20 }, stageId: won })).then(
    [
      cardUpdated({ changedFieldIds: [amount], values: { [company]: 'Acme', [amount]: 20 } }),
      { type: 'CardStageChanged', data: { cardId, pipelineId, stageId: won, previousStageId: lead, sessionId: null, tags: ['vip'], movedAt: now } },
    ],
    'values first, then the move',
  )
  given(cardCreated).when(update({ tags: [] })).then([cardUpdated({ tagsChanged: true, tags: [] })], 'the tags alone')
  given(cardCreated).when(update({ values: { [amount]: null } })).then([cardUpdated({ changedFieldIds: [amount], values: { [company]: 'Acme' } })], 'null clears a value')
  given(cardCreated).when(update({ stageId: company })).thenRejects(BadRequestError, 'a move to a stage of no pipeline')
  given().when(update({ tags: [] })).thenRejects(NotFoundError, 'no such card')
  given(cardCreated).when(update({ workspaceId: otherWs })).thenRejects(NotFoundError, 'a card of another workspace')

  const madeRequired = pipelineUpdated([field(company, 'Company', 'text'), field(amount, 'Amount', 'currency', { required: true }), field(seats, 'Seats', 'number', { required: true })])
  given(cardCreated).when(update({ pipeline: deals(madeRequired), values: { [company]: 'Acme Inc' } })).then(
    [cardUpdated({ changedFieldIds: [company], values: { [company]: 'Acme Inc', [amount]: 10 } })],
    'a field made required later does not block other changes',
  )
  given(cardCreated).when(update({ pipeline: deals(madeRequired), values: { [amount]: null } })).thenRejects(/field "Amount" is required and cannot be cleared/, 'a required field cannot be cleared')

  const amountRemoved = pipelineUpdated([field(company, 'Company', 'text')], [amount])
  given(cardCreated).when(update({ pipeline: deals(amountRemoved), tags: ['x'] })).then(
    [cardUpdated({ tagsChanged: true, values: { [company]: 'Acme' }, tags: ['x'] })],
    'values of removed fields are not carried forward',
  )
  given(cardCreated).when(update({ pipeline: deals(amountRemoved) })).thenNothing('dropping them alone is no change: the read model dropped them with the field')

  const moved: CardEvent = { type: 'CardStageChanged', data: { cardId, pipelineId, stageId: won, previousStageId: lead, sessionId: null, tags: ['vip'], movedAt: now } }
  given(cardCreated, moved).when(update({ stageId: won })).thenNothing('evolve applied the move')
})

t.test('DeleteCard', async (t) => {
  const { given } = spec(t, card)
  const remove = (workspaceId = ws): CardCommand => ({ type: 'DeleteCard', data: { cardId, workspaceId, now } })
  const deleted: CardEvent = { type: 'CardDeleted', data: { cardId, pipelineId, stageId: lead, sessionId: null, tags: ['vip'], deletedAt: now } }
  t.same(given(cardCreated).when(remove()).then([deleted], 'a card is deleted with what its webhook names'), { status: 'deleted' }, 'a deleted card keeps nothing')
  given(cardCreated, deleted).when(remove()).thenRejects(NotFoundError, 'deleted already')
  given(cardCreated, deleted).when(update({ tags: [] })).thenRejects(NotFoundError, 'a deleted card takes no change')
  given(cardCreated).when(remove(otherWs)).thenRejects(NotFoundError, 'a card of another workspace')
})

t.test('valueMisfit', async (t) => {
  const select = { ...field(company, 'Plan', 'select'), options: ['basic', 'pro'] }
  examples(t, valueMisfit, [
    ['a number', [field(amount, 'Seats', 'number'), 3], undefined],
    ['Infinity is no number', [field(amount, 'Seats', 'number'), Number.POSITIVE_INFINITY], 'field "Seats" (number) takes a number'],
    ['a numeric string is no number', [field(amount, 'Seats', 'number'), '3'], 'field "Seats" (number) takes a number'],
    ['a real date', [field(amount, 'Due', 'date'), '2024-02-29'], undefined],
    ['a date that does not exist', [field(amount, 'Due', 'date'), '2023-02-29'], 'field "Due" (date) takes a date as YYYY-MM-DD'],
    ['an email address', [field(amount, 'Mail', 'email'), 'ana@example.com'], undefined],
    ['no email without a domain', [field(amount, 'Mail', 'email'), 'ana@example'], 'field "Mail" (email) takes an email address'],
    ['a phone with its punctuation', [field(amount, 'Phone', 'phone'), '+55 (11) 91234-5678'], undefined],
    ['too few digits for a phone', [field(amount, 'Phone', 'phone'), '12-34'], 'field "Phone" (phone) takes a phone number of 7 to 15 digits, optionally with +, spaces, dots, dashes and parentheses'],
    ['one of the options', [select, 'pro'], undefined],
    ['none of the options', [select, 'gold'], 'field "Plan" (select) takes one of: basic, pro'],
    ['false is a boolean', [field(amount, 'Paid', 'boolean'), false], undefined],
    ['an empty text', [field(amount, 'Note', 'text'), ''], 'field "Note" (text) takes a non-empty string of at most 10000 characters'],
  ])
})

t.test('applyValues', async (t) => {
  const fields = [field(company, 'Company', 'text', { required: true }), field(amount, 'Amount', 'currency')]
  examples(t, applyValues, [
    ['a patch over the values', [fields, { [company]: 'Acme' }, { [amount]: 5 }, { complete: true }], { [company]: 'Acme', [amount]: 5 }],
    ['values of fields the pipeline lost are dropped', [fields, { [company]: 'Acme', [seats]: 3 }, {}, { complete: false }], { [company]: 'Acme' }],
    ['a key that is no field', [fields, {}, { [seats]: 3 }, { complete: false }], rejects(/values\/.*: the pipeline has no field with this id/)],
    ['a missing required field, for a new card', [fields, {}, { [amount]: 5 }, { complete: true }], rejects(/field "Company" is required/)],
    ['a missing required field, for an older card', [fields, {}, { [amount]: 5 }, { complete: false }], { [amount]: 5 }],
  ])
})

t.test('addTags', async (t) => {
  const own = Array.from({ length: MAX_TAGS - 5 }, (_, i) => `own-${i}`)
  const added = ['own-0', ...Array.from({ length: 10 }, (_, i) => `flow-${i}`)]
  examples(t, addTags, [
    ['the card keeps its own, in order, and gets no repeats', [['vip', 'late'], ['late', 'new', 'new']], { tags: ['vip', 'late', 'new'], dropped: [] }],
    ['what a tag may not be is left out', [[], ['a,b', ' x', 'y ', '', 'x'.repeat(101), 'ok']], { tags: ['ok'], dropped: ['a,b', ' x', 'y ', '', 'x'.repeat(101)] }],
    [
      `the card's own first, then new ones up to ${MAX_TAGS}`,
      [own, added],
      { tags: [...own, 'flow-0', 'flow-1', 'flow-2', 'flow-3', 'flow-4'], dropped: ['flow-5', 'flow-6', 'flow-7', 'flow-8', 'flow-9'] },
    ],
  ])
  t.ok(TypeCompiler.Compile(Tags).Check(addTags(own, added).tags), 'the result passes Tags')
  examples(t, cardStream, [['one stream per card', [cardId], `card-${cardId}`]])
})
