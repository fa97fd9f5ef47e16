import t from 'tap'
import type { FlowDefinition } from '../../src/domain/flow-definition.js'
import { runConversationTest } from '../../src/engine/conversation-tests.js'
import { toRunnable } from '../../src/engine/flow-versions.js'
import type { RunnableFlow } from '../../src/engine/interpreter.js'
import { orderLookup } from '../fixtures/order-lookup.js'
import { echoFlow } from '../helpers/flows.js'

// A conversation test plays the flow with the engine's own interpreter, turn by turn, and checks
// each turn against what the test expects; the outside is answered from the test, never called.

const runnable = (definition: object): RunnableFlow => {
  const flow = toRunnable(definition as FlowDefinition)
  if (typeof flow === 'string') throw new Error(flow)
  return flow
}
const inputs = { timeZone: 'UTC' }
const text = (body: string) => ({ type: 'text' as const, text: { body } })

t.test('a test that describes the conversation passes, turn by turn', async (t) => {
  const result = runConversationTest(runnable(echoFlow), {
    name: 'echoes',
    start: { messages: [{ text: { equals: 'Say something' } }], waitsAt: 'ask' },
    steps: [
      { send: text('hi'), expect: { messages: [{ text: { equals: 'You said hi' } }, { text: { contains: 'something' } }], variables: { said: 'hi' }, visits: 'say' } },
      { send: text('bye'), expect: { messages: [], status: 'completed', waitsAt: null, finish: true } },
    ],
  }, inputs)
  t.same(result.passed, true)
  t.same(result.steps.map((step) => [step.step, step.passed, step.said]), [
    [0, true, ['Say something']],
    [1, true, ['You said hi', 'Say something']],
    [2, true, []],
  ])
})

t.test('a turn that differs fails its step, naming what differs', async (t) => {
  const result = runConversationTest(runnable(echoFlow), {
    name: 'wrong',
    steps: [{ send: text('hi'), expect: { messages: [{ text: { equals: 'You said hello' } }, { text: { contains: 'something' } }] } }, { send: text('again') }],
  }, inputs)
  t.equal(result.passed, false)
  t.same(result.steps[1], { step: 1, passed: false, problems: [{ at: 'messages[0].text', expected: 'You said hello', actual: 'You said hi' }], said: ['You said hi', 'Say something'], waitsAt: 'ask', status: 'active' })
  t.equal(result.steps[2]?.passed, true, 'later steps still run')
})

t.test('calls outside are answered from the test, in order per node, and never made', async (t) => {
  const flow = runnable(orderLookup('https://shop.example.com'))
  const shipped = { status: 200, headers: {}, body: JSON.stringify({ status: 'shipped' }) }
  const result = runConversationTest(flow, {
    name: 'looks up',
    answers: [{ nodeId: 'lookup', answer: shipped }, { nodeId: 'lookup', answer: { status: 503, headers: {}, body: '' } }],
    steps: [{ send: text('1234'), expect: { messages: [{ text: { equals: 'Your order is shipped' } }], variables: { status: 'shipped', httpStatus: 200 } } }],
  }, inputs)
  t.equal(result.passed, true, 'the first answer')
  const failing = runConversationTest(flow, { name: 'down', answers: [{ nodeId: 'lookup', answer: { error: 'timeout', message: 'no answer' } }], steps: [{ send: text('1'), expect: { messages: [{ text: { contains: 'Sorry' } }] } }] }, inputs)
  t.equal(failing.passed, true, 'an error answer leads where a real one would')
  const unanswered = runConversationTest(flow, { name: 'no answer', steps: [{ send: text('1') }] }, inputs)
  t.same(unanswered, { passed: false, steps: [unanswered.steps[0]], stopped: 'step 1: node lookup makes a call the test gives no answer for (answers: [{ nodeId: "lookup", answer: … }])',
      stop: { step: 1, reason: 'unanswered_call', nodeId: 'lookup' },
    })
})

t.test('steps after the end, and a timer where none is pending, stop the test', async (t) => {
  const ended = runConversationTest(runnable(echoFlow), { name: 'too long', steps: [{ send: text('bye') }, { send: text('anyone?') }] }, inputs)
  t.match(ended, { passed: false, stopped: 'step 2: the conversation has ended; it takes no more steps', stop: { step: 2, reason: 'ended' } })
  const noTimer = runConversationTest(runnable(echoFlow), { name: 'timer', steps: [{ timer: true }] }, inputs)
  t.match(noTimer, { passed: false, stopped: 'step 1: no timer is pending at ask', stop: { step: 1, reason: 'no_pending_timer', nodeId: 'ask' } })
})

t.test('a timer fires when due, on the test clock', async (t) => {
  const flow = runnable({
    schemaVersion: 1,
    nodes: [
      { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
      { id: 'ask', type: 'question', position: { x: 0, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Still there?' } }, input: { kind: 'text' }, timeout: { seconds: 600 } } },
      { id: 'late', type: 'message', position: { x: 0, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Talk later' } }] } },
    ],
    edges: [
      { id: 'a', source: 'start', target: 'ask' },
      { id: 'b', source: 'ask', sourceHandle: 'timeout', target: 'late' },
    ],
  })
  const result = runConversationTest(flow, { name: 'times out', steps: [{ timer: true, expect: { messages: [{ text: { equals: 'Talk later' } }], status: 'completed' } }] }, inputs)
  t.equal(result.passed, true)
  const again = runConversationTest(flow, { name: 'times out', steps: [{ timer: true }] }, inputs)
  t.same(again, result, 'the same on every run')
})
