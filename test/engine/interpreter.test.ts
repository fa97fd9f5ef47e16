import t from 'tap'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { TypedNode } from '../../src/domain/nodes/index.js'
import { initialConversation, MAX_NODES_PER_TURN, runTurn } from '../../src/engine/interpreter.js'
import {
  AGENT,
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
