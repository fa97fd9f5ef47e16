import t from 'tap'
import type { NodeData } from '../../src/domain/nodes/index.js'
import type { TypedNode } from '../../src/domain/nodes/index.js'
import { MESSAGES_HELD, type ConversationState, type Trigger } from '../../src/domain/turn.js'
import { initialConversation } from '../../src/engine/interpreter.js'
import { bodies, edge, end, flow, message, NOW, question, start, START, text, textReply, turn } from '../helpers/engine.js'

// Turns of flows that wait for time: a question's reminders and reply timeout, a delay, and the
// messages a delay holds. The timer triggers are the ones the sweeper fires (docs/timers.md).

const delay = (id: string, seconds: number): TypedNode => ({ id, type: 'delay', position: { x: 0, y: 0 }, data: { seconds } })
const at = (seconds: number) => new Date(NOW / 1000 + seconds * 1000).toISOString()
const fired = (state: ConversationState): Trigger => {
  const waiting = state.waitingAt
  if (waiting?.until === undefined) throw new Error('no timer is pending')
  return { type: 'timer', nodeId: waiting.nodeId, until: waiting.until }
}

t.test('a question with a reply timeout and a reminder', async (t) => {
  const ask: NodeData<'question'> = {
    prompt: text('Your order number?'),
    input: { kind: 'text' },
    saveAs: 'order',
    timeout: { seconds: 60, reminders: [{ afterSeconds: 20, message: text('Still there, {{name}}?') }] },
  }
  const f = flow(
    [start(), question('ask', ask), message('thanks', text('Looking up {{order}}')), message('bye', text('Talk later!')), end('done')],
    [edge('start', 'ask'), edge('ask', 'thanks', 'default'), edge('ask', 'bye', 'timeout'), edge('thanks', 'done'), edge('bye', 'done')],
  )
  const asked = turn(f, initialConversation({ name: 'Ana' }), START)

  t.test('the prompt waits with a timer at the first reminder', async (t) => {
    t.same(bodies(asked), ['Your order number?'])
    t.same(asked.state.waitingAt, { nodeId: 'ask', retries: 0, until: at(20), reminded: 0 })
  })

  const reminded = turn(f, asked.state, fired(asked.state))
  t.test('at 20 s the reminder is sent, interpolated, and the question waits until 60 s', async (t) => {
    t.equal(reminded.status, 'active')
    t.same(bodies(reminded), ['Still there, Ana?'])
    t.same(reminded.visited, ['ask'])
    t.same(reminded.state.waitingAt, { nodeId: 'ask', retries: 0, until: at(60), reminded: 1 })
  })

  t.test('at 60 s it leaves by timeout and says nothing of its own', async (t) => {
    const timedOut = turn(f, reminded.state, fired(reminded.state))
    t.equal(timedOut.status, 'completed')
    t.same(timedOut.visited, ['ask', 'bye', 'done'])
    t.same(bodies(timedOut), ['Talk later!'])
    t.same(timedOut.variables, {})
  })

  t.test('a reply before the reminder cancels both: their timers find the wait over', async (t) => {
    const answered = turn(f, asked.state, textReply('A-123'))
    t.same(bodies(answered), ['Looking up A-123'])
    t.equal(answered.state.waitingAt, null)
    for (const stale of [fired(asked.state), fired(reminded.state)]) {
      const after = turn(f, answered.state, stale)
      t.same([after.messages, after.visited, after.functions], [[], [], []])
    }
  })

  t.test('a reply after the reminder cancels the timeout', async (t) => {
    const answered = turn(f, reminded.state, textReply('A-123'))
    t.same(bodies(answered), ['Looking up A-123'])
    const after = turn(f, answered.state, fired(reminded.state))
    t.same([after.messages, after.visited], [[], []])
  })

  t.test('an earlier timer of the same question changes nothing once a reminder has moved it on', async (t) => {
    const stale = turn(f, reminded.state, fired(asked.state))
    t.same([stale.status, stale.state, stale.messages], ['active', reminded.state, []])
  })
})

t.test('a timeout exit with no edge finishes the session, saying why', async (t) => {
  const f = flow([start(), question('ask', { prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 5 } }), end('ok')], [edge('start', 'ask'), edge('ask', 'ok', 'default')])
  const asked = turn(f, initialConversation(), START)
  t.same(asked.state.waitingAt, { nodeId: 'ask', retries: 0, until: at(5), reminded: 0 })
  const timedOut = turn(f, asked.state, fired(asked.state))
  t.equal(timedOut.status, 'completed')
  t.same(timedOut.functions, [{ type: 'finish', timestamp: NOW, reason: 'timeout' }])
  t.same(timedOut.messages, [])
})

t.test('an end reached otherwise finishes with no reason', async (t) => {
  const f = flow([start(), question('ask', { prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 5 } })], [edge('start', 'ask')])
  const answered = turn(f, turn(f, initialConversation(), START).state, textReply('hi'))
  t.same(answered.functions, [{ type: 'finish', timestamp: NOW }])
})

t.test('a delay', async (t) => {
  const f = flow(
    [
      start(),
      message('hello', text('Let me check…')),
      delay('pause', 30),
      message('found', text('Found it.')),
      question('ask', { prompt: text('Anything else?'), input: { kind: 'text' }, saveAs: 'more' }),
      message('echo', text('You said {{more}}')),
      question('again', { prompt: text('And?'), input: { kind: 'text' }, saveAs: 'more' }),
      end('done'),
    ],
    [edge('start', 'hello'), edge('hello', 'pause'), edge('pause', 'found'), edge('found', 'ask'), edge('ask', 'echo', 'default'), edge('echo', 'again'), edge('again', 'done', 'default')],
  )
  const paused = turn(f, initialConversation(), START)

  t.test('the turn ends at the delay with its timer', async (t) => {
    t.equal(paused.status, 'active')
    t.same(bodies(paused), ['Let me check…'])
    t.same(paused.state.waitingAt, { nodeId: 'pause', retries: 0, until: at(30) })
  })

  t.test('its timer goes on in a new turn', async (t) => {
    const resumed = turn(f, paused.state, fired(paused.state))
    t.same(resumed.visited, ['pause', 'found', 'ask'])
    t.same(bodies(resumed), ['Found it.', 'Anything else?'])
    t.same(resumed.state.waitingAt, { nodeId: 'ask', retries: 0 })
  })

  t.test('messages during the delay are held, then answered after it in the order they came', async (t) => {
    const first = turn(f, paused.state, textReply('one'))
    t.same([first.status, first.messages, first.visited, first.warnings], ['active', [], [], []], 'a held message is not answered yet')
    t.same(first.state.held, [{ type: 'text', text: { body: 'one' } }])
    t.same(first.state.waitingAt, paused.state.waitingAt, 'and the delay still ends when it was to')
    const second = turn(f, first.state, textReply('two'))
    const resumed = turn(f, second.state, fired(second.state))
    t.same(bodies(resumed), ['Found it.', 'Anything else?', 'You said one', 'And?'], 'the first answers the first question, the second the next')
    t.same(resumed.visited, ['pause', 'found', 'ask', 'ask', 'echo', 'again', 'again', 'done'])
    t.equal(resumed.status, 'completed')
    t.same(resumed.variables, { more: 'two' })
    t.notOk(resumed.state.held, 'nothing is held any more')
  })

  t.test('a held message the flow ends before answering is not answered, with a warning', async (t) => {
    let state = paused.state
    for (const body of ['one', 'two', 'three']) state = turn(f, state, textReply(body)).state
    const resumed = turn(f, state, fired(state))
    t.equal(resumed.status, 'completed')
    t.same(resumed.warnings, ['1 held message(s) not answered: the conversation ended'])
    t.notOk(resumed.state.held)
  })

  t.test(`at most ${MESSAGES_HELD} messages are held; past that the oldest is dropped, with a warning`, async (t) => {
    let state = paused.state
    let warnings: string[] = []
    for (let n = 1; n <= MESSAGES_HELD + 1; n++) {
      const out = turn(f, state, textReply(`m${n}`))
      state = out.state
      warnings = out.warnings
    }
    t.equal(state.held?.length, MESSAGES_HELD)
    t.same(state.held?.[0], { type: 'text', text: { body: 'm2' } })
    t.same(warnings, [`1 held message(s) dropped: a session holds at most ${MESSAGES_HELD} messages during a delay`])
  })

  t.test('a message that comes while held ones wait behind a question is answered after them', async (t) => {
    // A delay, then a wait for an event: the held message stays held through the wait.
    const g = flow(
      [
        start(),
        delay('pause', 30),
        { id: 'wait', type: 'waitForEvent', position: { x: 0, y: 0 }, data: { event: 'paid', timeoutSeconds: 60 } },
        question('ask', { prompt: text('Name?'), input: { kind: 'text' }, saveAs: 'name' }),
        message('hi', text('Hi {{name}}')),
        question('ask2', { prompt: text('Age?'), input: { kind: 'text' }, saveAs: 'age' }),
        message('age', text('Age {{age}}')),
      ],
      [edge('start', 'pause'), edge('pause', 'wait'), edge('wait', 'ask', 'received'), edge('ask', 'hi', 'default'), edge('hi', 'ask2'), edge('ask2', 'age', 'default')],
    )
    let state = turn(g, initialConversation(), START).state
    state = turn(g, state, textReply('Ana')).state
    const woke = turn(g, state, fired(state))
    t.same(woke.state.waitingAt?.nodeId, 'wait')
    t.same(woke.state.held, [{ type: 'text', text: { body: 'Ana' } }], 'a wait for an event answers no held message')
    const paid = turn(g, woke.state, { type: 'event', event: { name: 'paid', data: {} } })
    t.same(bodies(paid), ['Name?', 'Hi Ana', 'Age?'])
    const late = turn(g, woke.state, textReply('not answered'))
    t.same(late.state.held, [{ type: 'text', text: { body: 'Ana' } }], 'a message during the wait for an event is not held')
  })
})
