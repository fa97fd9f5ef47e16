import t from 'tap'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { NodeData, TypedNode } from '../../src/domain/nodes/index.js'
import { CALL_LIMITS, type HttpCallAnswer, type HttpCallRequest, type RecordedCall } from '../../src/domain/outside-call.js'
import { EVENTS_KEPT, type ConversationState, type Trigger } from '../../src/domain/turn.js'
import { initialConversation, MAX_NODES_PER_TURN, runTurn, runTurnOrCall, weightedChoice, type RunnableFlow } from '../../src/engine/interpreter.js'
import { examples } from '../helpers/decider-spec.js'
import {
  AGENT,
  bodies,
  chain,
  context,
  converse,
  edge,
  end,
  flow,
  last,
  message,
  NOW,
  question,
  SECTOR,
  setVariable,
  split,
  start,
  START,
  text,
  textReply,
  transfer,
  turn,
} from '../helpers/engine.js'

const greeting = flow([start(), message('hello', text('Hi'), text('How are you?')), end()], chain('start', 'hello', 'end'))

t.test('trigger start', async (t) => {
  t.test('given start linked to end, the session finishes at once', async (t) => {
    const out = turn(flow([start(), end()], chain('start', 'end')), initialConversation(), START)
    t.same(out.visited, ['start', 'end'])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
    t.equal(out.status, 'completed')
    t.same(out.messages, [])
    t.same(out.warnings, [])
    t.equal(out.state.waitingAt, null)
  })

  t.test('given a message node, its messages go out in order, each with the node id', async (t) => {
    const out = turn(greeting, initialConversation(), START)
    t.same(out.messages, [
      { type: 'text', text: { body: 'Hi' }, nodeId: 'hello' },
      { type: 'text', text: { body: 'How are you?' }, nodeId: 'hello' },
    ])
    t.same(out.visited, ['start', 'hello', 'end'])
    t.equal(out.status, 'completed')
  })

  t.test('given a question, its prompt goes out and the conversation waits there', async (t) => {
    const f = flow([start(), question('ask', { prompt: text('Your name?'), input: { kind: 'text' } }), end()], [edge('start', 'ask'), edge('ask', 'end', 'default')])
    const out = turn(f, initialConversation(), START)
    t.same(out.messages, [{ type: 'text', text: { body: 'Your name?' }, nodeId: 'ask' }])
    t.same(out.state.waitingAt, { nodeId: 'ask', retries: 0 })
    t.equal(out.status, 'active')
    t.same(out.functions, [])
    t.same(out.visited, ['start', 'ask'])
  })

  t.test('given a conversation that already waits, start begins again at the start node', async (t) => {
    const state = { ...initialConversation(), waitingAt: { nodeId: 'ask', retries: 1 } }
    const out = turn(greeting, state, START)
    t.same(out.visited, ['start', 'hello', 'end'])
    t.equal(out.state.waitingAt, null)
  })
})

t.test('trigger message', async (t) => {
  const f = flow(
    [start(), question('ask', { prompt: text('Your name?'), input: { kind: 'text' }, saveAs: 'name' }), message('thanks', text('Thanks {{name}}')), end()],
    [edge('start', 'ask'), edge('ask', 'thanks', 'default'), edge('thanks', 'end')],
  )

  t.test('given the conversation waits at a question, a valid reply continues on its default handle', async (t) => {
    const [, out] = converse(f, [textReply('Ana')])
    t.same(out?.visited, ['ask', 'thanks', 'end'])
    t.same(out?.messages, [{ type: 'text', text: { body: 'Thanks Ana' }, nodeId: 'thanks' }])
    t.same(out?.variables, { name: 'Ana' })
    t.equal(out?.status, 'completed')
  })

  t.test('given a completed conversation, a message changes nothing and warns', async (t) => {
    const [done] = converse(greeting, [])
    const state = done?.state ?? initialConversation()
    const out = turn(greeting, state, textReply('hello?'))
    t.equal(out.status, 'completed')
    t.same(out.warnings, ['message ignored: the conversation is not waiting for a reply'])
    t.same(out.state, state)
    t.same([out.messages, out.functions, out.kanban, out.visited, out.variables], [[], [], [], [], {}])
  })

  t.test('given the conversation waits at a node the flow does not have, the turn fails', async (t) => {
    const out = turn(f, { ...initialConversation(), waitingAt: { nodeId: 'gone', retries: 0 } }, textReply('Ana'))
    t.equal(out.status, 'error')
    t.same(out.warnings, ['broken reference: waiting at gone, which is not a question of this flow'])
    t.equal(out.state.waitingAt, null)
  })

  t.test('given the conversation waits at a node that is not a question, the turn fails', async (t) => {
    const out = turn(f, { ...initialConversation(), waitingAt: { nodeId: 'thanks', retries: 0 } }, textReply('Ana'))
    t.equal(out.status, 'error')
    t.match(out.warnings, [/not a question/])
    t.same(out.messages, [])
  })
})

t.test('setVariable', async (t) => {
  const assign = (value: Parameters<typeof setVariable>[2]) =>
    turn(flow([start(), setVariable('set', 'x', value), end()], chain('start', 'set', 'end')), initialConversation({ name: 'Ana', kept: 1 }), START)

  t.test('a string is a template', async (t) => {
    const out = assign('Hello {{name}} ({{sessionId}})')
    t.same(out.variables, { x: 'Hello Ana (session-1)' })
    t.same(out.state.variables, { name: 'Ana', kept: 1, x: 'Hello Ana (session-1)' })
  })

  t.test('numbers, booleans and objects are stored as they are', async (t) => {
    t.same(assign(42).variables, { x: 42 })
    t.same(assign(false).variables, { x: false })
    t.same(assign({ plan: '{{name}}', n: [1, 2] }).state.variables.x, { plan: '{{name}}', n: [1, 2] })
  })

  t.test('a later assignment in the same turn wins, and later nodes see it', async (t) => {
    const f = flow(
      [start(), setVariable('one', 'x', 'first'), setVariable('two', 'x', '{{x}} then second'), message('show', text('{{x}}')), end()],
      chain('start', 'one', 'two', 'show', 'end'),
    )
    const out = turn(f, initialConversation(), START)
    t.same(out.variables, { x: 'first then second' })
    t.same(out.messages.map((m) => m.type === 'text' && m.text.body), ['first then second'])
  })
})

t.test('transfer', async (t) => {
  for (const [targetType, targetId] of [
    ['sector', SECTOR],
    ['agent', AGENT],
  ] as const) {
    t.test(`to a ${targetType} emits the function and completes without finish`, async (t) => {
      const f = flow([start(), message('bye', text('One moment')), transfer('human', targetType, targetId)], chain('start', 'bye', 'human'))
      const out = turn(f, initialConversation(), START)
      t.same(out.functions, [{ type: 'transfer', targetType, targetId, timestamp: NOW }])
      t.equal(out.status, 'completed')
      t.same(out.visited, ['start', 'bye', 'human'])
      t.equal(out.state.waitingAt, null)
    })
  }

  t.test('edges leaving a transfer are never followed', async (t) => {
    const f = flow([start(), transfer('human', 'sector', SECTOR), message('after', text('never'))], [...chain('start', 'human', 'after')])
    const out = turn(f, initialConversation(), START)
    t.same(out.visited, ['start', 'human'])
    t.same(out.messages, [])
  })
})

t.test('end emits finish and completes; nothing after it runs', async (t) => {
  const f = flow([start(), end(), message('after', text('never'))], chain('start', 'end', 'after'))
  const out = turn(f, initialConversation(), START)
  t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
  t.same(out.visited, ['start', 'end'])
  t.equal(out.status, 'completed')
})

t.test('an unconnected exit finishes the session as end would', async (t) => {
  const cases: [string, TypedNode[], string[]][] = [
    ['start', [start()], ['start']],
    ['message', [start(), message('hello', text('Hi'))], ['start', 'hello']],
    ['setVariable', [start(), setVariable('set', 'x', 1)], ['start', 'set']],
  ]
  for (const [type, nodes, visited] of cases) {
    t.test(`after ${type}`, async (t) => {
      const out = turn(flow(nodes, chain(...visited)), initialConversation(), START)
      t.same(out.visited, visited)
      t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
      t.equal(out.status, 'completed')
    })
  }

  t.test('an edge from a named handle is not the unnamed exit', async (t) => {
    const out = turn(flow([start(), message('hello', text('Hi'))], [edge('start', 'hello', 'default')]), initialConversation(), START)
    t.same(out.visited, ['start'])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
  })

  t.test('an edge with a null handle is the unnamed exit', async (t) => {
    const out = turn(flow([start(), end()], [{ id: 'e', source: 'start', sourceHandle: null, target: 'end' }]), initialConversation(), START)
    t.same(out.visited, ['start', 'end'])
  })
})

t.test('broken references end the turn with error', async (t) => {
  t.test('an edge to a missing node keeps what was sent before it', async (t) => {
    const out = turn(flow([start(), message('hello', text('Hi'))], [edge('start', 'hello'), edge('hello', 'ghost')]), initialConversation(), START)
    t.equal(out.status, 'error')
    t.same(out.warnings, ['broken reference: node ghost does not exist'])
    t.same(out.visited, ['start', 'hello'])
    t.equal(out.messages.length, 1)
    t.same(out.functions, [], 'an error is not a finish')
  })

  t.test('a flow without a start node', async (t) => {
    const out = turn(flow([end()], []), initialConversation(), START)
    t.equal(out.status, 'error')
    t.same(out.warnings, ['broken reference: the flow has no start node'])
    t.same(out.visited, [])
  })

  t.test('data that breaks its schema fails the turn instead of throwing', async (t) => {
    const corrupt: TypedNode = {
      id: 'bad',
      type: 'message',
      position: { x: 0, y: 0 },
      data: {
        get messages(): OutgoingMessage[] {
          throw new Error('messages unreadable')
        },
      },
    }
    const out = turn(flow([start(), corrupt], chain('start', 'bad')), initialConversation(), START)
    t.equal(out.status, 'error')
    t.same(out.warnings, ['engine failure in node bad: messages unreadable'])
  })
})

t.test('loop limit', async (t) => {
  const steps = (count: number): TypedNode[] => Array.from({ length: count }, (_, i) => setVariable(`s${i}`, 'n', i))

  t.test(`given a cycle without a question, the ${MAX_NODES_PER_TURN + 1}st node ends the session with error`, async (t) => {
    const f = flow([start(), setVariable('a', 'x', 'a'), setVariable('b', 'x', 'b')], [...chain('start', 'a', 'b'), edge('b', 'a')])
    const out = turn(f, initialConversation(), START)
    t.equal(out.status, 'error')
    t.same(out.warnings, [`loop limit: more than ${MAX_NODES_PER_TURN} nodes in one turn`])
    t.equal(out.visited.length, MAX_NODES_PER_TURN)
    t.same(out.functions, [])
    t.equal(out.state.waitingAt, null)
  })

  t.test(`exactly ${MAX_NODES_PER_TURN} nodes in one turn is allowed`, async (t) => {
    const middle = steps(MAX_NODES_PER_TURN - 2)
    const f = flow([start(), ...middle, end()], chain('start', ...middle.map((n) => n.id), 'end'))
    const out = turn(f, initialConversation(), START)
    t.equal(out.status, 'completed')
    t.equal(out.visited.length, MAX_NODES_PER_TURN)
  })

  t.test(`${MAX_NODES_PER_TURN + 1} nodes in one turn is not`, async (t) => {
    const middle = steps(MAX_NODES_PER_TURN - 1)
    const f = flow([start(), ...middle, end()], chain('start', ...middle.map((n) => n.id), 'end'))
    const out = turn(f, initialConversation(), START)
    t.equal(out.status, 'error')
    t.notOk(out.visited.includes('end'))
  })

  t.test('the count starts again with every turn', async (t) => {
    const middle = steps(MAX_NODES_PER_TURN - 2)
    const f = flow(
      [start(), question('ask', { prompt: text('?'), input: { kind: 'text' } }), ...middle, end()],
      [edge('start', 'ask'), edge('ask', middle[0]?.id ?? '', 'default'), ...chain(...middle.map((n) => n.id), 'end')],
    )
    const out = last(converse(f, [textReply('go')]))
    t.equal(out.status, 'completed', 'the answered question counts as the first node of its turn')
    t.equal(out.visited.length, MAX_NODES_PER_TURN)
  })
})

t.test('purity', async (t) => {
  const f = flow(
    [start(), setVariable('set', 'x', { deep: { n: 1 } }), question('ask', { prompt: text('Hi {{x.deep.n}}'), input: { kind: 'text' }, saveAs: 'y' }), end()],
    [...chain('start', 'set', 'ask'), edge('ask', 'end', 'default')],
  )

  t.test('the same inputs give deep-equal outputs', async (t) => {
    t.same(converse(f, [textReply('a')]), converse(f, [textReply('a')]))
    const state = initialConversation({ a: 1 })
    t.same(runTurn(f, state, START, context()), runTurn(f, state, START, context()))
  })

  t.test('neither the state nor the flow is modified', async (t) => {
    const state = initialConversation({ a: { b: 1 } })
    const stateBefore = structuredClone(state)
    const flowBefore = structuredClone(f)
    const first = turn(f, state, START)
    const second = turn(f, first.state, textReply('b'))
    t.same(state, stateBefore)
    t.same(f, flowBefore)
    t.same(first.state.waitingAt, { nodeId: 'ask', retries: 0 }, 'the next turn did not reach back into this one')
    t.not(second.state, first.state)
  })

  t.test('variables given to initialConversation are copied', async (t) => {
    const variables = { customer: { name: 'Ana' } }
    const state = initialConversation(variables)
    variables.customer.name = 'Bia'
    t.same(state, { waitingAt: null, variables: { customer: { name: 'Ana' } }, lastTimestampMicros: 0, card: null })
  })
})

const httpRequest = (id: string, data: NodeData<'httpRequest'>): TypedNode => ({ id, type: 'httpRequest', position: { x: 0, y: 0 }, data })
const waitForEvent = (id: string, data: NodeData<'waitForEvent'>): TypedNode => ({ id, type: 'waitForEvent', position: { x: 0, y: 0 }, data })

const ORDER_URL = 'https://api.example.com/orders/'
/** The GET the `call` node of `orderFlow` sends for order `id`, as the interpreter builds it. */
const orderRequest = (id = 'o-1', nodeUrl = ORDER_URL): HttpCallRequest => ({ method: 'GET', url: `${nodeUrl}${id}`, headers: [], body: null, timeoutMs: CALL_LIMITS.timeoutMs.default })
const recorded = (index: number, nodeId: string, request: HttpCallRequest, answer: HttpCallAnswer, durationMs = 20): RecordedCall => ({ index, nodeId, request, answer, durationMs })
const ok = (body: unknown): HttpCallAnswer => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** start → call (GET the order, its status saved) → `ok` says it; with `errorEdge`, a failed call goes to `sorry`. */
const orderFlow = (errorEdge: boolean): RunnableFlow =>
  flow(
    [
      start(),
      httpRequest('call', { method: 'GET', url: `${ORDER_URL}{{orderId}}`, saveResponse: [{ path: '$.order.status', variable: 'status' }] }),
      message('ok', text('Your order is {{status}}')),
      message('sorry', text('We could not look it up')),
    ],
    [edge('start', 'call'), edge('call', 'ok', 'success'), ...(errorEdge ? [edge('call', 'sorry', 'error')] : [])],
  )

t.test('httpRequest: a turn stops at a call and goes on with its recorded answer', async (t) => {
  const f = orderFlow(true)
  const state = initialConversation({ orderId: 'o 1/2' })

  t.test('with no recorded call, the turn asks for the call', async (t) => {
    const needed = runTurnOrCall(f, state, START, context())
    t.same(needed, { status: 'calling', index: 0, nodeId: 'call', request: orderRequest('o%201%2F2') })
    t.throws(() => runTurn(f, state, START, context()), { message: 'the turn needs a call of node call that is not recorded' }, 'runTurn has no engine to make it')
  })

  t.test('with the call recorded, the turn completes and later nodes read what it saved', async (t) => {
    const calls = [recorded(0, 'call', orderRequest('o%201%2F2'), ok({ order: { status: 'shipped' } }))]
    const out = turn(f, state, START, context({ calls }))
    t.equal(out.status, 'completed')
    t.same(out.visited, ['start', 'call', 'ok'])
    t.same(out.messages, [{ type: 'text', text: { body: 'Your order is shipped' }, nodeId: 'ok' }])
    t.same(out.variables, { status: 'shipped' })
    t.same(out.warnings, [])
    t.equal(out.state.callsMade, 1, 'the call counts for the session')
    t.same(runTurnOrCall(f, state, START, context({ calls })), out, 'the same inputs give the same output: replay calls nothing')
  })

  t.test('a second call of the turn is asked for at the next index', async (t) => {
    const two = flow(
      [start(), httpRequest('first', { method: 'GET', url: `${ORDER_URL}1` }), httpRequest('second', { method: 'POST', url: `${ORDER_URL}2`, body: { n: 1 } })],
      [edge('start', 'first'), edge('first', 'second', 'success')],
    )
    const calls = [recorded(0, 'first', orderRequest('1'), ok({}))]
    t.same(runTurnOrCall(two, initialConversation(), START, context({ calls })), {
      status: 'calling',
      index: 1,
      nodeId: 'second',
      request: { method: 'POST', url: `${ORDER_URL}2`, headers: [{ name: 'content-type', value: 'application/json' }], body: '{"n":1}', timeoutMs: CALL_LIMITS.timeoutMs.default },
    })
  })
})

t.test('httpRequest: the error exit', async (t) => {
  const state = initialConversation({ orderId: 'o-1' })
  const calls = [recorded(0, 'call', orderRequest(), { status: 503, headers: {}, body: 'busy' })]
  const reason = `GET ${ORDER_URL}o-1 answered 503`

  t.test('without an error edge, the turn ends in error for the node\'s reason', async (t) => {
    const out = turn(orderFlow(false), state, START, context({ calls }))
    t.equal(out.status, 'error')
    t.same(out.warnings, [`httpRequest call: ${reason}`, `httpRequest call failed and has no error edge: ${reason}`])
    t.same(out.visited, ['start', 'call'])
    t.same(out.functions, [], 'an error is not a finish')
    t.equal(out.state.waitingAt, null)
  })

  t.test('with an error edge, the turn follows it', async (t) => {
    const out = turn(orderFlow(true), state, START, context({ calls }))
    t.equal(out.status, 'completed')
    t.same(out.visited, ['start', 'call', 'sorry'])
    t.same(out.messages, [{ type: 'text', text: { body: 'We could not look it up' }, nodeId: 'sorry' }])
    t.same(out.warnings, [`httpRequest call: ${reason}`])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
  })
})

t.test('httpRequest: limits on calls', async (t) => {
  const request = orderRequest('loop')
  /** start → call, again and again while it succeeds; a failed call goes to `done`. */
  const loop = flow(
    [start(), httpRequest('call', { method: 'GET', url: `${ORDER_URL}loop` }), message('done', text('done'))],
    [edge('start', 'call'), edge('call', 'call', 'success'), edge('call', 'done', 'error')],
  )
  const made = (count: number, durationMs = 20) => Array.from({ length: count }, (_, index) => recorded(index, 'call', request, ok({}), durationMs))

  t.test(`the ${CALL_LIMITS.perTurn + 1}th call of a turn gets a limit answer without suspending`, async (t) => {
    t.same(runTurnOrCall(loop, initialConversation(), START, context({ calls: made(CALL_LIMITS.perTurn - 1) })), { status: 'calling', index: CALL_LIMITS.perTurn - 1, nodeId: 'call', request }, `the ${CALL_LIMITS.perTurn}th is still asked for`)
    const out = turn(loop, initialConversation(), START, context({ calls: made(CALL_LIMITS.perTurn) }))
    t.equal(out.status, 'completed')
    t.same(out.visited, ['start', ...Array.from({ length: CALL_LIMITS.perTurn + 1 }, () => 'call'), 'done'])
    t.same(out.warnings, [`httpRequest call: GET ${ORDER_URL}loop: a turn makes at most ${CALL_LIMITS.perTurn} calls`])
  })

  t.test('the calls of a session are counted across turns', async (t) => {
    const f = flow(
      [
        start(),
        httpRequest('a', { method: 'GET', url: `${ORDER_URL}a` }),
        httpRequest('b', { method: 'GET', url: `${ORDER_URL}b` }),
        question('ask', { prompt: text('More?'), input: { kind: 'text' } }),
        httpRequest('c', { method: 'GET', url: `${ORDER_URL}c` }),
      ],
      [...chain('start', 'a'), edge('a', 'b', 'success'), edge('b', 'ask', 'success'), edge('ask', 'c', 'default')],
    )
    const first = turn(f, initialConversation(), START, context({ calls: [recorded(0, 'a', orderRequest('a'), ok({})), recorded(1, 'b', orderRequest('b'), ok({}))] }))
    t.equal(first.state.callsMade, 2)
    const second = turn(f, first.state, textReply('yes'), context({ calls: [recorded(0, 'c', orderRequest('c'), ok({}))] }))
    t.equal(second.state.callsMade, 3, 'the next turn adds its own')
    const none = turn(f, first.state, START, context({ calls: [recorded(0, 'a', orderRequest('a'), ok({})), recorded(1, 'b', orderRequest('b'), ok({}))] }))
    t.equal(none.state.callsMade, 4, 'a turn that starts over counts its calls again')
    const quiet = turn(flow([start(), end()], chain('start', 'end')), first.state, START)
    t.equal(quiet.state.callsMade, 2, 'a turn without calls leaves the count')
  })

  t.test(`a session makes at most ${CALL_LIMITS.perSession} calls`, async (t) => {
    const nearly: ConversationState = { ...initialConversation(), callsMade: CALL_LIMITS.perSession - 1 }
    t.same(runTurnOrCall(loop, nearly, START, context()), { status: 'calling', index: 0, nodeId: 'call', request }, 'the last call it may make is asked for')
    const out = turn(loop, nearly, START, context({ calls: made(1) }))
    t.same(out.warnings, [`httpRequest call: GET ${ORDER_URL}loop: a session makes at most ${CALL_LIMITS.perSession} calls`])
    t.same(out.visited, ['start', 'call', 'call', 'done'])
    const spent = turn(loop, { ...initialConversation(), callsMade: CALL_LIMITS.perSession }, START, context())
    t.same(spent.warnings, [`httpRequest call: GET ${ORDER_URL}loop: a session makes at most ${CALL_LIMITS.perSession} calls`], 'one with none left calls nothing')
  })

  t.test(`the calls of a turn may take ${CALL_LIMITS.turnWaitMs / 1000} s together`, async (t) => {
    const almost = runTurnOrCall(loop, initialConversation(), START, context({ calls: made(2, CALL_LIMITS.turnWaitMs / 2 - 1) }))
    t.same(almost, { status: 'calling', index: 2, nodeId: 'call', request }, 'a millisecond under the limit, the next call is asked for')
    const out = turn(loop, initialConversation(), START, context({ calls: made(2, CALL_LIMITS.turnWaitMs / 2) }))
    t.same(out.warnings, [`httpRequest call: GET ${ORDER_URL}loop: the calls of a turn may take ${CALL_LIMITS.turnWaitMs / 1000} s together`])
    t.same(out.visited, ['start', 'call', 'call', 'call', 'done'])
  })
})

t.test('waitForEvent', async (t) => {
  const paid = (data: Record<string, unknown>): Trigger => ({ type: 'event', event: { name: 'payment.confirmed', data } })
  const other = (name: string, data: Record<string, unknown> = {}): Trigger => ({ type: 'event', event: { name, data } })
  /** start → wait (payment.confirmed, an hour) → `thanks` reads what it saved; its timeout goes to `late`. */
  const f = flow(
    [
      start(),
      waitForEvent('wait', { event: 'payment.confirmed', timeoutSeconds: 3600, saveAs: 'payment' }),
      message('thanks', text('Paid {{payment.amount}}')),
      message('late', text('Too late')),
    ],
    [edge('start', 'wait'), edge('wait', 'thanks', 'received'), edge('wait', 'late', 'timeout')],
  )
  const until = new Date(NOW / 1000 + 3600 * 1000).toISOString()
  const waiting = turn(f, initialConversation(), START)

  t.test('the turn waits for the event until now + timeoutSeconds', async (t) => {
    t.equal(waiting.status, 'active')
    t.same(waiting.state.waitingAt, { nodeId: 'wait', retries: 0, event: 'payment.confirmed', until })
    t.equal(until, '2026-01-01T01:00:00.000Z')
    t.same(waiting.messages, [])
    t.same(waiting.visited, ['start', 'wait'])
    const odd = turn(f, initialConversation(), START, context({ nowMicros: NOW + 999 }))
    t.equal(odd.state.waitingAt?.until, until, 'a clock between milliseconds is cut to its millisecond')
  })

  t.test('an event of that name wakes it: its data saved, the flow goes on', async (t) => {
    const out = turn(f, waiting.state, paid({ amount: 10 }))
    t.equal(out.status, 'completed')
    t.same(out.visited, ['wait', 'thanks'])
    t.same(out.variables, { payment: { amount: 10 } })
    t.same(out.messages, [{ type: 'text', text: { body: 'Paid 10' }, nodeId: 'thanks' }])
    t.equal(out.state.waitingAt, null)
  })

  t.test('a timer at that node and until leaves by timeout', async (t) => {
    const out = turn(f, waiting.state, { type: 'timer', nodeId: 'wait', until })
    t.equal(out.status, 'completed')
    t.same(out.visited, ['wait', 'late'])
    t.same(out.messages, [{ type: 'text', text: { body: 'Too late' }, nodeId: 'late' }])
    t.same(out.variables, {})
  })

  t.test('a stale timer changes nothing', async (t) => {
    for (const [situation, timer] of [
      ['another until', { type: 'timer', nodeId: 'wait', until: '2026-01-01T00:59:59.999Z' }],
      ['another node', { type: 'timer', nodeId: 'thanks', until }],
    ] as const) {
      const out = turn(f, waiting.state, timer)
      t.same([out.status, out.state, out.visited, out.messages, out.warnings], ['active', waiting.state, [], [], []], situation)
    }
    const done = turn(f, waiting.state, paid({}))
    const after = turn(f, done.state, { type: 'timer', nodeId: 'wait', until })
    t.same([after.status, after.state, after.visited, after.functions], ['completed', done.state, [], []], 'nor one of a wait that is over')
  })

  t.test('a message while it waits is not answered and warns', async (t) => {
    const out = turn(f, waiting.state, textReply('hello?'))
    t.equal(out.status, 'active')
    t.same(out.warnings, ['message not answered: the conversation waits at wait for the event payment.confirmed'])
    t.same(out.state, waiting.state)
    t.same([out.messages, out.visited, out.variables], [[], [], {}])
  })

  t.test('an event of another name is kept, and a later wait for it takes it at once', async (t) => {
    const two = flow(
      [
        start(),
        waitForEvent('wait', { event: 'payment.confirmed', timeoutSeconds: 3600 }),
        waitForEvent('ship', { event: 'order.shipped', timeoutSeconds: 60, saveAs: 'shipment' }),
        message('done', text('Shipped by {{shipment.carrier}}')),
      ],
      [edge('start', 'wait'), edge('wait', 'ship', 'received'), edge('ship', 'done', 'received')],
    )
    const first = turn(two, initialConversation(), START)
    const kept = turn(two, first.state, other('order.shipped', { carrier: 'Post' }))
    t.equal(kept.status, 'active')
    t.same(kept.visited, [])
    t.same(kept.state.inbox, [{ eventId: 'card-1', name: 'order.shipped', data: { carrier: 'Post' } }], 'kept with an id of its own')
    t.same(kept.state.waitingAt, first.state.waitingAt, 'the wait goes on')
    const out = turn(two, kept.state, paid({}))
    t.equal(out.status, 'completed')
    t.same(out.visited, ['wait', 'ship', 'done'], 'the second wait took the kept event without waiting')
    t.same(out.messages, [{ type: 'text', text: { body: 'Shipped by Post' }, nodeId: 'done' }])
    t.same(out.state.inbox, [], 'and it is kept no more')
  })

  t.test(`more than ${EVENTS_KEPT} kept events drop the oldest, with a warning`, async (t) => {
    const inbox = Array.from({ length: EVENTS_KEPT }, (_, i) => ({ eventId: `e-${i}`, name: i === 0 ? 'oldest' : `n${i}`, data: { i } }))
    const full = turn(f, { ...waiting.state, inbox: inbox.slice(0, EVENTS_KEPT - 1) }, other('newest'))
    t.same(full.warnings, [], `the ${EVENTS_KEPT}th is kept`)
    t.equal(full.state.inbox?.length, EVENTS_KEPT)
    const out = turn(f, { ...waiting.state, inbox }, other('newest'))
    t.equal(out.status, 'active')
    t.same(out.warnings, [`event oldest dropped: a session keeps at most ${EVENTS_KEPT} events no node waited for`])
    t.same(out.state.inbox?.map((event) => event.name), [...inbox.slice(1).map((event) => event.name), 'newest'])
  })

  t.test('an event while the conversation waits at a question is kept', async (t) => {
    const asking = flow([start(), question('ask', { prompt: text('?'), input: { kind: 'text' } })], [edge('start', 'ask')])
    const at = turn(asking, initialConversation(), START)
    const out = turn(asking, at.state, paid({ amount: 1 }))
    t.equal(out.status, 'active')
    t.same(out.state.waitingAt, { nodeId: 'ask', retries: 0 })
    t.same(out.state.inbox, [{ eventId: 'card-1', name: 'payment.confirmed', data: { amount: 1 } }])
  })
})

t.test('split: weighted choice', async (t) => {
  const branches = [
    { id: 'a', weight: 1 },
    { id: 'b', weight: 2 },
    { id: 'c', weight: 1 },
  ]
  const drawn = function drawn(draw: number) {
    return weightedChoice(branches, draw)
  }
  examples(t, drawn, [
    ['0 is the first branch', [0], 'a'],
    ['just under a quarter still the first', [0.2499], 'a'],
    ['a quarter begins the second, which holds half', [0.25], 'b'],
    ['just under three quarters still the second', [0.7499], 'b'],
    ['three quarters begins the last', [0.75], 'c'],
    ['the largest draw under 1 is the last', [1 - 2 ** -48], 'c'],
  ])
  t.equal(weightedChoice([{ id: 'only', weight: 100 }, { id: 'rare', weight: 1 }], 100 / 101 - 1e-9), 'only', 'weights 100 and 1: 100 of 101 draws take the first')
})

t.test('split: each visit draws, the turn records the draw, and a recorded turn takes its choices', async (t) => {
  const ab = split('ab', { id: 'a', weight: 50 }, { id: 'b', weight: 50 })
  const f = flow([start(), ab, message('a', text('A')), message('b', text('B'))], [edge('start', 'ab'), edge('ab', 'a', 'a'), edge('ab', 'b', 'b')])
  const draws = (...numbers: number[]) => {
    const left = [...numbers]
    return () => left.shift() ?? 0
  }

  t.test('the draw picks the branch, and the output records it', async (t) => {
    const out = turn(f, initialConversation(), START, context({ random: draws(0.7) }))
    t.same(out.visited, ['start', 'ab', 'b'])
    t.same(out.choices, [{ nodeId: 'ab', branchId: 'b' }])
    t.same(bodies(out), ['B'])
  })

  t.test('a turn that draws nothing records no choices', async (t) => {
    t.notOk('choices' in turn(greeting, initialConversation(), START), 'so turns recorded before split nodes existed replay the same')
  })

  t.test('recorded choices are taken instead of the draw', async (t) => {
    const out = turn(f, initialConversation(), START, context({ random: draws(0.7), choices: [{ nodeId: 'ab', branchId: 'a' }] }))
    t.same(out.visited, ['start', 'ab', 'a'])
    t.same(out.choices, [{ nodeId: 'ab', branchId: 'a' }])
  })

  t.test('a recorded choice of another node, or of a branch the node lacks, is drawn again', async (t) => {
    for (const choice of [{ nodeId: 'other', branchId: 'a' }, { nodeId: 'ab', branchId: 'gone' }]) {
      const out = turn(f, initialConversation(), START, context({ random: draws(0.7), choices: [choice] }))
      t.same(out.choices, [{ nodeId: 'ab', branchId: 'b' }], JSON.stringify(choice))
    }
  })

  t.test('a split visited twice in a turn draws twice, in order, and replays both', async (t) => {
    const looping = flow(
      [start(), setVariable('count', 'n', 0), ab, message('a', text('A')), message('b', text('B')), question('ask', { prompt: text('?'), input: { kind: 'text' } })],
      [edge('start', 'ab'), edge('ab', 'a', 'a'), edge('ab', 'b', 'b'), edge('a', 'ab'), edge('b', 'ask')],
    )
    const out = turn(looping, initialConversation(), START, context({ random: draws(0.1, 0.9) }))
    t.same(out.visited, ['start', 'ab', 'a', 'ab', 'b', 'ask'])
    t.same(out.choices, [{ nodeId: 'ab', branchId: 'a' }, { nodeId: 'ab', branchId: 'b' }])
    t.same(turn(looping, initialConversation(), START, context({ random: draws(0.9, 0.9), choices: out.choices })), out, 'the recorded choices, whatever the numbers')
  })

  t.test('draws come from the context only: the same numbers give the same turn', async (t) => {
    t.same(turn(f, initialConversation(), START, context({ random: draws(0.3) })), turn(f, initialConversation(), START, context({ random: draws(0.3) })))
  })
})
