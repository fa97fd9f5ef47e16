import t from 'tap'
import { check, schema } from '../../../src/domain/nodes/kanban-move.js'
import type { Field } from '../../../src/domain/pipeline.js'
import type { ConversationState } from '../../../src/domain/turn.js'
import { initialConversation } from '../../../src/engine/interpreter.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import {
  chain,
  context,
  end,
  flow,
  kanbanMove,
  NOW,
  OTHER_PIPELINE,
  PIPELINE,
  STAGE_NEW,
  STAGE_OTHER,
  STAGE_WON,
  start,
  START,
  turn,
} from '../../helpers/engine.js'
import { pipelineField } from '../../helpers/pipeline-fields.js'
import { checkProblems, emptyCatalog } from '../../helpers/visit.js'

t.test('kanbanMove', async (t) => {
  t.test('given no card, the first move creates one and the next moves it', async (t) => {
    const f = flow(
      [
        start(),
        kanbanMove('lead', { pipelineId: PIPELINE, stageId: STAGE_NEW, values: { name: '{{name}} ({{externalId}})', score: 5, vip: true }, tags: ['lead'] }),
        kanbanMove('won', { pipelineId: PIPELINE, stageId: STAGE_WON }),
        end(),
      ],
      chain('start', 'lead', 'won', 'end'),
    )
    const out = turn(f, initialConversation({ name: 'Ana' }), START)
    t.same(out.kanban, [
      {
        action: 'create',
        cardId: 'card-1',
        pipelineId: PIPELINE,
        stageId: STAGE_NEW,
        previousStageId: null,
        values: { name: 'Ana (contact-1)', score: 5, vip: true },
        tags: ['lead'],
        timestamp: NOW,
        nodeId: 'lead',
      },
      {
        action: 'move',
        cardId: 'card-1',
        pipelineId: PIPELINE,
        stageId: STAGE_WON,
        previousStageId: STAGE_NEW,
        values: {},
        tags: [],
        timestamp: NOW + 1,
        nodeId: 'won',
      },
    ])
    t.same(out.state.card, { cardId: 'card-1', pipelineId: PIPELINE, stageId: STAGE_WON })
    t.same(out.visited, ['start', 'lead', 'won', 'end'])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW + 2 }])
  })

  t.test('given a card from an earlier turn, the move uses it and no new id', async (t) => {
    let ids = 0
    const ctx = context({ newId: () => `fresh-${++ids}` })
    const state: ConversationState = { ...initialConversation(), card: { cardId: 'card-9', pipelineId: PIPELINE, stageId: STAGE_NEW } }
    const out = turn(flow([start(), kanbanMove('won', { pipelineId: PIPELINE, stageId: STAGE_WON })], chain('start', 'won')), state, START, ctx)
    t.match(out.kanban, [{ action: 'move', cardId: 'card-9', previousStageId: STAGE_NEW, stageId: STAGE_WON }])
    t.equal(ids, 0)
  })

  t.test('given a card in another pipeline, the move creates a new card there', async (t) => {
    const f = flow(
      [start(), kanbanMove('sales', { pipelineId: PIPELINE, stageId: STAGE_NEW }), kanbanMove('support', { pipelineId: OTHER_PIPELINE, stageId: STAGE_OTHER })],
      chain('start', 'sales', 'support'),
    )
    const out = turn(f, initialConversation(), START)
    t.match(out.kanban, [
      { action: 'create', cardId: 'card-1', pipelineId: PIPELINE },
      { action: 'create', cardId: 'card-2', pipelineId: OTHER_PIPELINE, stageId: STAGE_OTHER, previousStageId: null },
    ])
    t.same(out.state.card, { cardId: 'card-2', pipelineId: OTHER_PIPELINE, stageId: STAGE_OTHER })
  })

  t.test('a move to the stage the card is in is still reported, so its values and tags apply', async (t) => {
    const state: ConversationState = { ...initialConversation(), card: { cardId: 'card-9', pipelineId: PIPELINE, stageId: STAGE_NEW } }
    const f = flow([start(), kanbanMove('again', { pipelineId: PIPELINE, stageId: STAGE_NEW, tags: ['hot'] })], chain('start', 'again'))
    t.match(turn(f, state, START).kanban, [{ action: 'move', previousStageId: STAGE_NEW, stageId: STAGE_NEW, tags: ['hot'] }])
  })

  t.test('an unknown variable in a value renders empty and warns', async (t) => {
    const f = flow([start(), kanbanMove('lead', { pipelineId: PIPELINE, stageId: STAGE_NEW, values: { plan: 'plan {{plan}}' } })], chain('start', 'lead'))
    const out = turn(f, initialConversation(), START)
    t.same(out.kanban[0]?.values, { plan: 'plan ' })
    t.same(out.warnings, ['unknown variable {{plan}} in node lead'])
  })
})

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['a pipeline and a stage', [{ pipelineId: PIPELINE, stageId: STAGE_NEW }], true],
    ['values of each JSON type, and tags', [{ pipelineId: PIPELINE, stageId: STAGE_NEW, values: { a: '{{name}}', b: 1, c: false }, tags: ['lead'] }], true],
    ['a stage that is no uuid', [{ pipelineId: PIPELINE, stageId: 'won' }], false],
    ['an object as a value', [{ pipelineId: PIPELINE, stageId: STAGE_NEW, values: { a: { b: 1 } } }], false],
    ['a tag the card refuses', [{ pipelineId: PIPELINE, stageId: STAGE_NEW, tags: [''] }], false],
  ])
})

t.test('check', async (t) => {
  const field = (id: string, type: Field['type']) => pipelineField(`0190a0b0-0000-7000-8000-0000000000${id}`, type, type)
  const [note, amount] = [field('d1', 'text'), field('d2', 'currency')]
  const catalog = { ...emptyCatalog, pipelines: new Map([[PIPELINE, { stageIds: new Set([STAGE_NEW]), fields: [note, amount] }]]) }
  const problems = function problems(pipelineId: string, stageId: string, values = {}) {
    return checkProblems(check, { pipelineId, stageId, values }, catalog)
  }
  examples(t, problems, [
    ['a stage of a pipeline of the workspace, values its fields take', [PIPELINE, STAGE_NEW, { [note.id]: 'Hi {{name}}', [amount.id]: 10 }], []],
    ['a pipeline the workspace lacks', [OTHER_PIPELINE, STAGE_NEW], [`pipelineId: no pipeline "${OTHER_PIPELINE}" in this workspace`]],
    ['a stage of another pipeline', [PIPELINE, STAGE_WON], [`stageId: pipeline "${PIPELINE}" has no stage "${STAGE_WON}"`]],
    ['a field the pipeline lacks', [PIPELINE, STAGE_NEW, { nope: 1 }], [`values.nope: pipeline "${PIPELINE}" has no field "nope"`]],
    ['a value of another type', [PIPELINE, STAGE_NEW, { [amount.id]: 'ten' }], [`values.${amount.id}: field "currency" (currency) takes a number`]],
    ['a placeholder is text, which a currency refuses', [PIPELINE, STAGE_NEW, { [amount.id]: '{{total}}' }], [`values.${amount.id}: field "currency" (currency) takes a number; a value with {{…}} is text`]],
  ])
})
