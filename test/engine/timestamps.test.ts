import t from 'tap'
import { initialConversation } from '../../src/engine/interpreter.js'
import { chain, context, edge, flow, kanbanMove, NOW, PIPELINE, question, SECTOR, STAGE_NEW, STAGE_WON, start, START, text, textReply, transfer, turn } from '../helpers/engine.js'

// Functions and kanban actions carry the turn's timestamps: strictly increasing microseconds.

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
