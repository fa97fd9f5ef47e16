import t from 'tap'
import type { TypedNode } from '../../src/domain/nodes/index.js'
import { subflowKey, type Subflow } from '../../src/domain/turn.js'
import { initialConversation, type RunnableFlow } from '../../src/engine/interpreter.js'
import { bodies, context, edge, end, flow, message, NOW, question, SECTOR, start, START, text, textReply, transfer, turn } from '../helpers/engine.js'

// Turns through sub-flows (runFlow): the called flow runs with the session's variables and returns
// to its caller's `done` exit when it ends; the engine hands the interpreter the flows it may run.

const ROOT = '0190a0b0-0000-7000-8000-00000000f000'
const A = '0190a0b0-0000-7000-8000-00000000f00a'
const B = '0190a0b0-0000-7000-8000-00000000f00b'
const C = '0190a0b0-0000-7000-8000-00000000f00c'

const runFlow = (id: string, flowId: string, version: 'published' | number = 'published'): TypedNode => ({ id, type: 'runFlow', position: { x: 0, y: 0 }, data: { flowId, version } })
const ctx = context({ system: { sessionId: 'session-1', externalId: 'contact-1', flowId: ROOT } })

/** A flow with the flows it may run, each as `published` (version 1) and by its number. */
const withSubflows = (root: RunnableFlow, subflows: Record<string, RunnableFlow | string>): RunnableFlow => {
  const map = new Map<string, Subflow | string>()
  for (const [flowId, sub] of Object.entries(subflows)) {
    const resolved = typeof sub === 'string' ? sub : { version: 1, nodes: sub.nodes, edges: sub.edges }
    map.set(subflowKey({ flowId, version: 'published' }), resolved)
    map.set(subflowKey({ flowId, version: 1 }), resolved)
  }
  return { ...root, subflows: map }
}

/** root: hello → runFlow A → bye. A: asks the name → runFlow B. B: runFlow C → says done. C: greets by name, ends. */
const nested = withSubflows(
  flow([start(), message('hello', text('Hello')), runFlow('callA', A), message('bye', text('Bye {{name}}')), end()], [edge('start', 'hello'), edge('hello', 'callA'), edge('callA', 'bye', 'done'), edge('bye', 'end')]),
  {
    [A]: flow([start(), question('ask', { prompt: text('Name?'), input: { kind: 'text' }, saveAs: 'name' }), runFlow('callB', B)], [edge('start', 'ask'), edge('ask', 'callB', 'default')]),
    [B]: flow([start(), runFlow('callC', C), message('b-done', text('B done'))], [edge('start', 'callC'), edge('callC', 'b-done', 'done')]),
    [C]: flow([start(), message('greet', text('Hi {{name}}')), end('c-end')], [edge('start', 'greet'), edge('greet', 'c-end')]),
  },
)

t.test('three levels deep: each sub-flow returns to its caller, with the variables it set', async (t) => {
  const asked = turn(nested, initialConversation(), START, ctx)
  t.same(bodies(asked), ['Hello', 'Name?'])
  t.same(asked.state.frames, [{ nodeId: 'callA', flowId: A, version: 1 }], 'the conversation waits inside A')
  t.same(asked.state.waitingAt, { nodeId: 'ask', retries: 0 })
  const answered = turn(nested, asked.state, textReply('Ana'), ctx)
  t.same(bodies(answered), ['Hi Ana', 'B done', 'Bye Ana'])
  t.same(answered.visited, ['ask', 'callB', 'start', 'callC', 'start', 'greet', 'c-end', 'b-done', 'bye', 'end'])
  t.same(
    answered.flowsVisited,
    [
      { from: 0, flow: { flowId: A, version: 1 } },
      { from: 2, flow: { flowId: B, version: 1 } },
      { from: 4, flow: { flowId: C, version: 1 } },
      { from: 7, flow: { flowId: B, version: 1 } },
      { from: 8, flow: { flowId: A, version: 1 } },
      { from: 8, flow: null },
    ],
    'which flow each stretch of the path is in, for analytics',
  )
  t.same(asked.flowsVisited, [{ from: 3, flow: { flowId: A, version: 1 } }])
  const plain = turn(flow([start(), message('m', text('x'))], [edge('start', 'm')]), initialConversation(), START, ctx)
  t.notOk('flowsVisited' in plain, 'a turn that stays in its own flow records none')
  t.equal(answered.status, 'completed')
  t.same(answered.functions, [{ type: 'finish', timestamp: NOW }], "only the session's own end finishes it")
  t.notOk(answered.state.frames, 'no frame is left')
})

t.test("an exit with no edge in a sub-flow returns to the caller's done", async (t) => {
  const f = withSubflows(flow([start(), runFlow('call', A), message('after', text('Back'))], [edge('start', 'call'), edge('call', 'after', 'done')]), {
    [A]: flow([start(), message('inside', text('Inside'))], [edge('start', 'inside')]),
  })
  const out = turn(f, initialConversation(), START, ctx)
  t.same(bodies(out), ['Inside', 'Back'])
  t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
})

t.test('a transfer in a sub-flow ends the whole session', async (t) => {
  const f = withSubflows(flow([start(), runFlow('call', A), message('after', text('Back'))], [edge('start', 'call'), edge('call', 'after', 'done')]), {
    [A]: flow([start(), transfer('human', 'sector', SECTOR)], [edge('start', 'human')]),
  })
  const out = turn(f, initialConversation(), START, ctx)
  t.equal(out.status, 'completed')
  t.same(bodies(out), [])
  t.match(out.functions, [{ type: 'transfer', targetId: SECTOR }])
  t.notOk(out.state.frames)
})

t.test('a flow that is running already is refused at run time: the session ends in error', async (t) => {
  const f = withSubflows(flow([start(), runFlow('call', A)], [edge('start', 'call')]), {
    [A]: flow([start(), runFlow('back', ROOT)], [edge('start', 'back')]),
    [ROOT]: flow([start(), end()], [edge('start', 'end')]),
  })
  const out = turn(f, initialConversation(), START, ctx)
  t.equal(out.status, 'error')
  t.same(out.warnings, [`runFlow back: flow ${ROOT} is running already; sub-flows cannot run in a circle`])
})

t.test('sub-flows nest at most 5 deep', async (t) => {
  // root runs flow 0, flow i runs flow i + 1: five flows nest inside the root, the sixth is refused.
  const ids = Array.from({ length: 7 }, (_, i) => `0190a0b0-0000-7000-8000-0000000000${String(i).padStart(2, '0')}`)
  const calling = (i: number) => flow([start(), runFlow(`call${i}`, ids[i]!)], [edge('start', `call${i}`)])
  const f = withSubflows(calling(0), Object.fromEntries(ids.slice(0, -1).map((id, i) => [id, calling(i + 1)])))
  const out = turn(f, initialConversation(), START, ctx)
  t.equal(out.status, 'error')
  t.same(out.warnings, ['runFlow call5: sub-flows nest at most 5 deep'])
  t.same(out.visited.filter((id) => id.startsWith('call')), ['call0', 'call1', 'call2', 'call3', 'call4', 'call5'])
})

t.test('a flow that cannot be run ends the session in error, saying why', async (t) => {
  const f = withSubflows(flow([start(), runFlow('call', A)], [edge('start', 'call')]), { [A]: `flow ${A} not found in this workspace` })
  const out = turn(f, initialConversation(), START, ctx)
  t.equal(out.status, 'error')
  t.same(out.warnings, [`runFlow call: flow ${A} not found in this workspace`])
  const unloaded = turn(flow([start(), runFlow('call', B)], [edge('start', 'call')]), initialConversation(), START, ctx)
  t.same(unloaded.warnings, [`runFlow call: flow ${B} was not loaded for this turn`])
})
