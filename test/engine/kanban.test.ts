import t from 'tap'
import { initialConversation } from '../../src/engine/interpreter.js'
import type { ConversationState } from '../../src/domain/turn.js'
import {
  chain,
  context,
  edge,
  end,
  flow,
  kanbanMove,
  NOW,
  OTHER_PIPELINE,
  PIPELINE,
  question,
  SECTOR,
  STAGE_NEW,
  STAGE_OTHER,
  STAGE_WON,
  start,
  START,
  text,
  textReply,
  transfer,
  turn,
} from '../helpers/engine.js'

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

t.test('timestamps', async (t) => {
  const busy = flow(
    [
      start(),
      kanbanMove('lead', { pipelineId: PIPELINE, stageId: STAGE_NEW }),
      question('ask', { prompt: text('?'), input: { kind: 'text' } }),
      kanbanMove('won', { pipelineId: PIPELINE, stageId: STAGE_WON }),
      transfer('human', 'sector', SECTOR),
    ],
    [...chain('start', 'lead', 'ask'), edge('ask', 'won', 'default'), edge('won', 'human')],
  )
  const stamps = (out: ReturnType<typeof turn>) => [...out.kanban.map((k) => k.timestamp), ...out.functions.map((f) => f.timestamp)]

  t.test('strictly increase within a turn, starting at now', async (t) => {
    const f = flow(
      [start(), kanbanMove('a', { pipelineId: PIPELINE, stageId: STAGE_NEW }), kanbanMove('b', { pipelineId: PIPELINE, stageId: STAGE_WON }), transfer('human', 'sector', SECTOR)],
      chain('start', 'a', 'b', 'human'),
    )
    const out = turn(f, initialConversation(), START)
    t.same(stamps(out), [NOW, NOW + 1, NOW + 2])
    t.equal(out.state.lastTimestampMicros, NOW + 2)
  })

  t.test('strictly increase across turns when the clock stands still', async (t) => {
    const first = turn(busy, initialConversation(), START)
    const second = turn(busy, first.state, textReply('ok'))
    t.same(stamps(first), [NOW])
    t.same(stamps(second), [NOW + 1, NOW + 2])
  })

  t.test('strictly increase across turns when the clock steps back', async (t) => {
    const first = turn(busy, initialConversation(), START)
    const second = turn(busy, first.state, textReply('ok'), context({ nowMicros: NOW - 5_000_000 }))
    t.same(stamps(second), [NOW + 1, NOW + 2])
  })

  t.test('follow the clock when it is ahead of the last one', async (t) => {
    const first = turn(busy, initialConversation(), START)
    const second = turn(busy, first.state, textReply('ok'), context({ nowMicros: NOW + 1_000 }))
    t.same(stamps(second), [NOW + 1_000, NOW + 1_001])
    t.equal(second.state.lastTimestampMicros, NOW + 1_001)
  })

  t.test('are whole microseconds', async (t) => {
    const out = turn(busy, initialConversation(), START, context({ nowMicros: NOW + 0.75 }))
    t.same(stamps(out), [NOW])
  })

  t.test('a turn without functions or kanban actions leaves the last timestamp alone', async (t) => {
    const state = { ...initialConversation(), lastTimestampMicros: 123 }
    const out = turn(flow([start(), question('ask', { prompt: text('?'), input: { kind: 'text' } })], chain('start', 'ask')), state, START)
    t.equal(out.state.lastTimestampMicros, 123)
  })
})
