import t from 'tap'
import { verifySession } from '../../src/audit/verify.js'
import { bootstrap } from '../../src/commands/tenancy.js'
import { sessionStream } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurnOrCall } from '../../src/engine/interpreter.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Sub-flows through the API: flows that run one another three levels deep, the version a session
// runs fixed when it starts, cycles refused when a flow is saved or published, and an audit replay
// that reproduces every turn.

const text = (body: string) => ({ type: 'text', text: { body } })
const node = (id: string, type: string, data: object = {}) => ({ id, type, position: { x: 0, y: 0 }, data })
const runFlow = (id: string, flowId: string) => node(id, 'runFlow', { flowId, version: 'published' })
const edge = (source: string, target: string, sourceHandle?: string) => ({ id: `${source}-${target}`, source, target, ...(sourceHandle && { sourceHandle }) })
const definition = (nodes: object[], edges: object[]) => ({ schemaVersion: 1, nodes, edges })

for (const backend of apiBackends) {
  t.test(`sub-flows on ${backend.name}`, async (t) => {
    const { app, admin, ctx, store } = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, apiKey = admin.apiKey) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) })
      return { status: response.statusCode, json: response.body ? response.json() : undefined }
    }
    const ok = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
      const response = await call(method, url, payload)
      if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.json)}`)
      return response.json
    }
    await ok('POST', '/v1/variables', { name: 'name', type: 'string' })
    const create = async (name: string, nodes: object[], edges: object[]) => (await ok('POST', '/v1/flows', { name, definition: definition(nodes, edges) })).id as string

    const greet = await create('Greet', [node('start', 'start'), node('hi', 'message', { messages: [text('Hi {{name}}')] }), node('end', 'end')], [edge('start', 'hi'), edge('hi', 'end')])
    const confirm = await create('Confirm', [node('start', 'start'), runFlow('greet', greet), node('confirmed', 'message', { messages: [text('Confirmed')] })], [edge('start', 'greet'), edge('greet', 'confirmed', 'done')])
    const identify = await create(
      'Identify',
      [node('start', 'start'), node('ask', 'question', { prompt: text('Your name?'), input: { kind: 'text' }, saveAs: 'name' }), runFlow('confirm', confirm)],
      [edge('start', 'ask'), edge('ask', 'confirm', 'default')],
    )
    const support = await create(
      'Support',
      [node('start', 'start'), node('hello', 'message', { messages: [text('Hello')] }), runFlow('identify', identify), node('bye', 'message', { messages: [text('Bye {{name}}')] }), node('end', 'end')],
      [edge('start', 'hello'), edge('hello', 'identify'), edge('identify', 'bye', 'done'), edge('bye', 'end')],
    )

    const said = async (sessionId: string, turns: number): Promise<string[]> => {
      const events = await eventually(`${turns} turns of ${sessionId}`, async () => {
        const content = (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { type: string; data: { output: { messages: { text?: { body: string } }[] } } }[]
        const completed = content.filter((e) => e.type === 'TurnCompleted')
        return completed.length >= turns ? completed : undefined
      })
      return events.flatMap((e) => e.data.output.messages.map((m) => m.text?.body ?? ''))
    }
    const reply = (sessionId: string, body: string) => ok('POST', `/v1/sessions/${sessionId}/message`, text(body))

    await t.test('three levels deep, each returns to its caller', async (t) => {
      const { sessionId } = await ok('POST', `/v1/sessions/flows/${support}/create`)
      t.same(await said(sessionId, 1), ['Hello', 'Your name?'])
      t.equal((await ok('GET', `/v1/sessions/${sessionId}`)).waitingAt, 'ask', 'it waits at the question of the sub-flow')
      await reply(sessionId, 'Ana')
      t.same(await said(sessionId, 2), ['Hello', 'Your name?', 'Hi Ana', 'Confirmed', 'Bye Ana'])
      const session = await ok('GET', `/v1/sessions/${sessionId}`)
      t.same([session.status, session.variables], ['completed', { name: 'Ana' }])

      const verdict = await verifySession(sessionId, await store.readStream(sessionStream(sessionId)), (state) => new FlowVersions(store).ofSession(state), runTurnOrCall)
      t.same([verdict.turns, verdict.divergences], [2, []], 'an audit replay reproduces every turn, sub-flows and all')

      const reached = async (flowId: string) =>
        eventually(`the analytics of ${flowId}`, async () => {
          const analytics = await ok('GET', `/v1/flows/${flowId}/analytics?version=1`)
          const byNode = Object.fromEntries(analytics.nodes.map((n: { nodeId: string; reached: number }) => [n.nodeId, n.reached]))
          return Object.values(byNode).some((count) => count !== 0) ? byNode : undefined
        })
      t.same(await reached(greet), { start: 1, hi: 1, end: 1 }, "the called flow's nodes count under the called flow")
      t.same(await reached(identify), { start: 1, ask: 1, confirm: 1 })
      t.same(await reached(support), { start: 1, hello: 1, identify: 1, bye: 1, end: 1 }, "and not under the session's own flow, though both have a start")
    })

    await t.test('a session runs the sub-flow versions published when it started', async (t) => {
      const { sessionId: before } = await ok('POST', `/v1/sessions/flows/${support}/create`)
      await said(before, 1)
      await ok('PUT', `/v1/flows/${greet}/definition`, definition([node('start', 'start'), node('hi', 'message', { messages: [text('Welcome back, {{name}}')] })], [edge('start', 'hi')]))
      await ok('POST', `/v1/flows/${greet}/publish`)
      const { sessionId: after } = await ok('POST', `/v1/sessions/flows/${support}/create`)
      await said(after, 1)
      await reply(before, 'Ana')
      await reply(after, 'Bia')
      t.same((await said(before, 2)).slice(2), ['Hi Ana', 'Confirmed', 'Bye Ana'], 'the one started before the publish runs version 1')
      t.same((await said(after, 2)).slice(2), ['Welcome back, Bia', 'Confirmed', 'Bye Bia'], 'the one started after it runs version 2')

      await ok('POST', `/v1/flows/${greet}/rollback`, { version: 1 })
      const { sessionId: rolledBack } = await ok('POST', `/v1/sessions/flows/${support}/create`)
      await said(rolledBack, 1)
      await reply(rolledBack, 'Cid')
      t.same((await said(rolledBack, 2)).slice(2), ['Hi Cid', 'Confirmed', 'Bye Cid'], 'one started after a rollback of the sub-flow runs its live version 1')
    })

    await t.test('cycles are refused when a flow is saved, and a flow cannot run itself', async (t) => {
      const backToSupport = definition([node('start', 'start'), runFlow('again', support)], [edge('start', 'again')])
      const cycle = await call('PUT', `/v1/flows/${greet}/definition`, backToSupport)
      t.equal(cycle.status, 400)
      t.match(cycle.json.problems, [{ path: 'nodes[1].data.flowId', message: 'flow "Support" runs this flow again (Support → Identify → Confirm → Greet): sub-flows cannot run in a circle' }])
      const itself = await call('PUT', `/v1/flows/${greet}/definition`, definition([node('start', 'start'), runFlow('me', greet)], [edge('start', 'me')]))
      t.equal(itself.status, 400)
      t.match(itself.json.problems, [{ message: 'a flow cannot run itself' }])
    })

    await t.test("another workspace's flow is not found", async (t) => {
      const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: null })
      const theirs = (await app.inject({ method: 'POST', url: '/v1/flows', headers: { 'x-api-key': other.apiKey }, payload: { name: 'Theirs', definition: definition([node('start', 'start')], []) } })).json().id
      const refused = await call('POST', '/v1/flows', { name: 'Borrow', definition: definition([node('start', 'start'), runFlow('theirs', theirs)], [edge('start', 'theirs')]) })
      t.equal(refused.status, 400)
      t.match(refused.json.problems, [{ message: `no flow ${theirs} in this workspace` }])
    })
  })
}
