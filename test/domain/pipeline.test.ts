import t from 'tap'
import { DEFAULT_STAGE_COLOR, NUMERIC_FIELD_TYPES, pipeline, pipelineStream, reachablePipeline, type PipelineCommand, type PipelineEvent, type Stage } from '../../src/domain/pipeline.js'
import { BadRequestError, ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, fold, rejects, spec } from '../helpers/decider-spec.js'
import { pipelineField as field } from '../helpers/pipeline-fields.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const pipelineId = '0190a0b0-0000-7000-8000-000000000301'
const lead = '0190a0b0-0000-7000-8000-000000000311'
const won = '0190a0b0-0000-7000-8000-000000000312'
const lost = '0190a0b0-0000-7000-8000-000000000313'
const company = '0190a0b0-0000-7000-8000-000000000321'
const amount = '0190a0b0-0000-7000-8000-000000000322'
const plan = '0190a0b0-0000-7000-8000-000000000323'
const created = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const stage = (id: string, name: string, order: number, color = DEFAULT_STAGE_COLOR): Stage => ({ id, pipelineId, name, order, color })

const pipelineCreated: Extract<PipelineEvent, { type: 'PipelineCreated' }> = {
  type: 'PipelineCreated',
  data: { pipelineId, workspaceId: ws, name: 'Deals', stages: [stage(lead, 'Lead', 0), stage(won, 'Won', 1)], fields: [field(company, 'Company', 'text'), field(amount, 'Amount', 'currency')], createdAt: created },
}
const { createdAt: _createdAt, ...definition } = pipelineCreated.data
const updated = (data: Partial<Extract<PipelineEvent, { type: 'PipelineUpdated' }>['data']>): PipelineEvent => ({
  type: 'PipelineUpdated',
  data: { ...definition, removedStageIds: [], removedFieldIds: [], updatedAt: now, ...data },
})

t.test('CreatePipeline', async (t) => {
  const { given } = spec(t, pipeline)
  const create = (data: Partial<Extract<PipelineCommand, { type: 'CreatePipeline' }>['data']> = {}): PipelineCommand => ({
    type: 'CreatePipeline',
    data: {
      pipelineId,
      workspaceId: ws,
      name: 'Deals',
      stages: [{ id: lead, isNew: true, name: 'Lead' }, { id: won, isNew: true, name: 'Won' }],
      fields: [{ id: company, isNew: true, name: 'Company', type: 'text' }, { id: amount, isNew: true, name: 'Amount', type: 'currency', currency: 'BRL' }],
      now: created,
      ...data,
    },
  })
  const fields = [field(company, 'Company', 'text'), field(amount, 'Amount', 'currency', { order: 1 })]
  given().when(create()).then([{ ...pipelineCreated, data: { ...pipelineCreated.data, fields } }], 'order defaults to the position, colour to grey')
  given(pipelineCreated).when(create()).thenRejects(ConflictError, 'the same id twice')
  given().when(create({ stages: [{ id: won, isNew: true, name: 'Won', order: 1, color: '#00AA00' }, { id: lead, isNew: true, name: 'Lead', order: 0 }] })).then(
    [{ ...pipelineCreated, data: { ...pipelineCreated.data, stages: [stage(lead, 'Lead', 0), stage(won, 'Won', 1, '#00AA00')], fields } }],
    'stages sorted by their order',
  )
  given().when(create({ stages: [{ id: lead, isNew: true, name: 'Lead' }, { id: lead, isNew: true, name: 'Again' }] })).thenRejects({ type: BadRequestError, message: /stages\/1\/id: .* is listed twice/ }, 'a stage id twice')
  given().when(create({ stages: [{ id: lead, isNew: false, name: 'Lead' }] })).thenRejects({ type: BadRequestError, message: /is not one of this pipeline's stages/ }, 'an existing stage of a new pipeline')
  given().when(create({ stages: [] })).thenRejects(/stages/, 'the event schema wants a stage')
  given().when(create({ fields: [{ id: plan, isNew: true, name: 'Plan', type: 'select' }] })).thenRejects(/fields\/0\/options: a select field needs its options/, 'a select without options')
  given().when(create({ fields: [{ id: plan, isNew: true, name: 'Plan', type: 'text', options: ['a'] }] })).thenRejects(/only select fields have options/, 'options on a text field')
  given().when(create({ fields: [{ id: amount, isNew: true, name: 'Amount', type: 'currency' }] })).thenRejects(/a currency field needs a currency code/, 'a currency without its code')
  given().when(create({ fields: [{ id: amount, isNew: true, name: 'Amount', type: 'number', currency: 'BRL' }] })).thenRejects(/only currency fields have a currency/, 'a currency on a number field')
})

t.test('UpdatePipeline', async (t) => {
  const { given } = spec(t, pipeline)
  const change = (data: Partial<Extract<PipelineCommand, { type: 'UpdatePipeline' }>['data']>): PipelineCommand => ({
    type: 'UpdatePipeline',
    data: { pipelineId, workspaceId: ws, stagesHoldingCards: [], now, ...data },
  })
  const keepLead = [{ id: lead, isNew: false, name: 'Lead', order: 0 }]
  given(pipelineCreated).when(change({ stages: keepLead, stagesHoldingCards: [won] })).thenRejects({ type: ConflictError, message: /"Won".*still holds cards/ }, 'Won holds cards')
  given(pipelineCreated).when(change({ stages: keepLead, stagesHoldingCards: [lead] })).then([updated({ stages: [stage(lead, 'Lead', 0)], removedStageIds: [won] })], 'an occupied stage that stays is no obstacle')
  given(pipelineCreated).when(change({ stages: [...keepLead, { id: won, isNew: false, name: 'Won', order: 1 }, { id: lost, isNew: true, name: 'Lost' }] })).then(
    [updated({ stages: [stage(lead, 'Lead', 0), stage(won, 'Won', 1), stage(lost, 'Lost', 2)] })],
    'a new stage added',
  )
  given(pipelineCreated).when(change({ name: 'Deals' })).thenNothing('the same name changes nothing')
  given(pipelineCreated).when(change({ name: 'Sales' })).then([updated({ name: 'Sales' })], 'a new name')
  given(pipelineCreated, updated({ name: 'Sales' })).when(change({ name: 'Sales' })).thenNothing('evolve applied the earlier change')
  given(pipelineCreated).when(change({ workspaceId: otherWs, name: 'x' })).thenRejects(NotFoundError, 'a pipeline of another workspace')
  given().when(change({ name: 'x' })).thenRejects(NotFoundError, 'no such pipeline')
  const fields = [{ id: company, isNew: false, name: 'Company', type: 'text' as const }]
  given(pipelineCreated).when(change({ fields })).then([updated({ fields: [field(company, 'Company', 'text')], removedFieldIds: [amount] })], 'a field left out is removed')
  given(pipelineCreated).when(change({ fields: [{ ...fields[0]!, type: 'number' }] })).thenRejects({ type: ConflictError, message: /cannot become number/ }, 'a field changing its type')
})

t.test('reachablePipeline', async (t) => {
  const deals = fold(pipeline, [pipelineCreated])
  examples(t, reachablePipeline, [
    ['a pipeline of the caller\'s workspace', [deals, pipelineId, ws], deals],
    ['one of another workspace is not found', [deals, pipelineId, otherWs], rejects(NotFoundError)],
    ['nor is none', [pipeline.initialState, pipelineId, ws], rejects(NotFoundError)],
  ])
  t.same(NUMERIC_FIELD_TYPES, ['number', 'currency'], 'the card list sums numbers and currencies')
  examples(t, pipelineStream, [['one stream per pipeline', [pipelineId], `pipeline-${pipelineId}`]])
})
