import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { orderLookup } from '../fixtures/order-lookup.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Conversation tests kept with a flow, run through the API against its draft or a version: the
// engine's interpreter plays them, nothing is sent or called.

const text = (body: string) => ({ type: 'text', text: { body } })

/** Echo, then a lookup on the shop's API after `lookup`: the flows of the three tests. */
const shop = {
  ...echoFlow,
  nodes: echoFlow.nodes.map((node) => (node.id === 'end' ? { id: 'end', type: 'message', position: node.position, data: { messages: [{ type: 'text', text: { body: 'Bye' } }] } } : node)),
}

for (const backend of apiBackends) {
  t.test(`conversation tests on ${backend.name}`, async (t) => {
    const { app, admin, ctx } = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, key = admin.apiKey): Promise<{ status: number; json: any; headers: Record<string, unknown> }> => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) })
      return { status: response.statusCode, json: response.body ? response.json() : undefined, headers: response.headers }
    }
    t.equal((await call('POST', '/v1/variables', { name: 'said', type: 'string' })).status, 201)
    const flowId = (await call('POST', '/v1/flows', { name: 'Echo', definition: shop })).json.id as string
    const tests = `/v1/flows/${flowId}/tests`
    const greets = { name: 'Greets', start: { messages: [{ text: { equals: 'Say something' } }], waitsAt: 'ask' }, steps: [] }
    const echoes = {
      name: 'Echoes',
      steps: [{ send: text('hi'), expect: { messages: [{ text: { equals: 'You said hi' } }, { type: 'text' }], variables: { said: 'hi' } } }],
    }
    const ends = { name: 'Says bye', steps: [{ send: text('bye'), expect: { messages: [{ text: { pattern: 'B?e' } }], status: 'completed', finish: true } }] }
    const created: string[] = []
    for (const test of [greets, echoes, ends]) {
      const response = await call('POST', tests, test)
      t.equal(response.status, 201, `${test.name} is kept`)
      t.match(response.headers.location, new RegExp(`^${tests}/[0-9a-f-]{36}$`))
      created.push(String(response.headers.location).split('/').pop()!)
    }

    await t.test('properties a test does not name are left out, at any depth', async (t) => {
      const extra = { name: 'Extra', unknown: { nested: 1 }, steps: [{ send: text('hi'), expect: { messages: [{ text: { equals: 'You said hi' }, tone: 'warm' }], mood: 'x' } }] }
      const response = await call('POST', tests, extra)
      t.equal(response.status, 201, 'a test with properties no schema names is kept, not a 500')
      const id = String(response.headers.location).split('/').pop()!
      const kept = (await call('GET', `${tests}/${id}`)).json
      t.same([kept.unknown, kept.steps[0].expect.mood, kept.steps[0].expect.messages[0].tone], [undefined, undefined, undefined], 'without them')
      t.equal((await call('DELETE', `${tests}/${id}`)).status, 204)
    })

    await t.test('the tests are listed in name order, and read one by one', async (t) => {
      const list = await call('GET', `${tests}?size=10`)
      t.equal(list.status, 200)
      t.same(list.json.content.map((test: { name: string }) => test.name), ['Echoes', 'Greets', 'Says bye'])
      t.equal(list.json.totalElements, 3)
      t.match((await call('GET', `${tests}/${created[1]}`)).json, { ...echoes, id: created[1] })
    })

    await t.test('the three pass on the draft and on version 1', async (t) => {
      const draft = await call('POST', `/v1/flows/${flowId}/test-runs`)
      t.equal(draft.status, 200)
      t.match(draft.json, { flowId, version: null, passed: true })
      t.same(draft.json.tests.map((test: { name: string; passed: boolean }) => [test.name, test.passed]), [['Echoes', true], ['Greets', true], ['Says bye', true]])
      t.same(draft.json.tests[0].steps[1].said, ['You said hi', 'Say something'])
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { version: 1 })).json, { version: 1, passed: true })
    })

    await t.test('a draft that changes one answer fails exactly the test that checks it, naming the step', async (t) => {
      const changed = { ...shop, nodes: shop.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'You typed {{said}}' } }] } } : node)) }
      t.equal((await call('PUT', `/v1/flows/${flowId}/definition`, changed)).status, 200)
      const run = await call('POST', `/v1/flows/${flowId}/test-runs`, {})
      t.equal(run.json.passed, false)
      t.same(run.json.tests.filter((test: { passed: boolean }) => !test.passed).map((test: { name: string }) => test.name), ['Echoes'])
      const failing = run.json.tests.find((test: { name: string }) => test.name === 'Echoes')
      t.same(failing.steps[1].problems, [{ at: 'messages[0].text', expected: 'You said hi', actual: 'You typed hi' }])
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { version: 1 })).json, { passed: true }, 'the published version still passes')
      const some = await call('POST', `/v1/flows/${flowId}/test-runs`, { testIds: [created[0]] })
      t.same(some.json.tests.map((test: { name: string }) => test.name), ['Greets'], 'only the tests asked for')
    })

    await t.test('a real conversation becomes a test, which passes on the version it ran', async (t) => {
      const { sessionId } = (await call('POST', `/v1/sessions/flows/${flowId}/create`, { variables: { said: 'nothing yet' } })).json
      for (const body of ['one', 'two']) {
        t.equal((await call('POST', `/v1/sessions/${sessionId}/message`, text(body))).status, 202)
      }
      await eventually('both answers', async () => ((await call('GET', `/v1/sessions/${sessionId}`)).json.pendingMessages === 0 ? true : undefined))
      const recorded = await call('GET', `/v1/sessions/${sessionId}/test`)
      t.equal(recorded.status, 200)
      t.equal(recorded.json.flowId, flowId)
      t.same(recorded.json.test, {
        name: `Session ${sessionId.slice(-8)}`,
        variables: { said: 'nothing yet' },
        start: { messages: [{ type: 'text', text: { equals: 'Say something' } }], waitsAt: 'ask', status: 'active' },
        steps: ['one', 'two'].map((said) => ({
          send: text(said),
          expect: { messages: [{ type: 'text', text: { equals: `You said ${said}` } }, { type: 'text', text: { equals: 'Say something' } }], variables: { said }, waitsAt: 'ask', status: 'active' },
        })),
      })
      const saved = await call('POST', tests, { ...recorded.json.test, name: 'Recorded' })
      t.equal(saved.status, 201)
      const id = String(saved.headers.location).split('/').pop()
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { version: 1, testIds: [id] })).json, { passed: true })
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { testIds: [id] })).json, { passed: false }, 'and fails on the changed draft')
      t.equal((await call('DELETE', `${tests}/${id}`)).status, 204)
      t.equal((await call('GET', '/v1/sessions/00000000-0000-4000-8000-000000000000/test')).status, 404)
    })

    await t.test("a call outside is answered from the test's answers", async (t) => {
      const lookupFlow = (await call('POST', '/v1/variables', { name: 'order', type: 'string' }), await call('POST', '/v1/variables', { name: 'status', type: 'string' }), await call('POST', '/v1/variables', { name: 'httpStatus', type: 'number' }))
      t.equal(lookupFlow.status, 201)
      const shopFlow = (await call('POST', '/v1/flows', { name: 'Orders', definition: orderLookup('https://shop.example.com') })).json.id as string
      const looksUp = {
        name: 'Shipped',
        answers: [{ nodeId: 'lookup', answer: { status: 200, headers: {}, body: '{"status":"shipped"}' } }],
        steps: [{ send: text('1234'), expect: { messages: [{ text: { equals: 'Your order is shipped' } }] } }],
      }
      t.equal((await call('POST', `/v1/flows/${shopFlow}/tests`, looksUp)).status, 201)
      t.equal((await call('POST', `/v1/flows/${shopFlow}/tests`, { name: 'No answer', steps: [{ send: text('1') }] })).status, 201)
      const run = await call('POST', `/v1/flows/${shopFlow}/test-runs`)
      t.same(run.json.tests.map((test: { name: string; passed: boolean; stopped?: string }) => [test.name, test.passed, test.stopped]), [
        ['No answer', false, 'step 1: node lookup makes a call the test gives no answer for (answers: [{ nodeId: "lookup", answer: … }])'],
        ['Shipped', true, undefined],
      ])
    })

    await t.test('replace, delete, and what is refused', async (t) => {
      const replaced = await call('PUT', `${tests}/${created[0]}`, { ...greets, name: 'Greets first' })
      t.equal(replaced.status, 200)
      t.match(replaced.json, { id: created[0], name: 'Greets first' })
      t.equal((await call('POST', tests, { ...greets, name: ' says BYE ' })).status, 409, "another test's name")
      t.equal((await call('POST', tests, { ...greets, name: '  ' })).status, 400, 'a blank name')
      t.equal((await call('POST', tests, { name: 'Bad step', steps: [{ wave: true }] })).status, 400, 'a step of no kind')
      t.equal((await call('PUT', `${tests}/00000000-0000-4000-8000-000000000000`, greets)).status, 404, 'replacing a test that is not there')
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { testIds: ['00000000-0000-4000-8000-000000000000'] })).json, { message: /no test 00000000-0000-4000-8000-000000000000 in this flow/ })
      t.match((await call('POST', `/v1/flows/${flowId}/test-runs`, { version: 9 })).json, { message: /published versions 1 to 1/ })
      t.equal((await call('DELETE', `${tests}/${created[2]}`)).status, 204)
      t.equal((await call('GET', `${tests}/${created[2]}`)).status, 404)
      t.equal((await call('DELETE', `${tests}/${created[2]}`)).status, 404, 'deleted once')
    })

    await t.test("another organization's key finds neither the flow nor its tests", async (t) => {
      const other = await createOrganization(ctx, { name: 'Other' })
      const workspace = await createWorkspace(ctx, { organizationId: other.organizationId, name: 'W' })
      const { apiKey } = await issueApiKey(ctx, { organizationId: other.organizationId, workspaceId: workspace.workspaceId, name: 'k', role: 'workspace', callbackUrl: null })
      for (const [method, url] of [['GET', tests], ['GET', `${tests}/${created[1]}`], ['POST', `/v1/flows/${flowId}/test-runs`], ['DELETE', `${tests}/${created[1]}`]] as const) {
        t.equal((await call(method, url, undefined, apiKey)).status, 404, `${method} ${url}`)
      }
      t.equal((await call('POST', tests, greets, apiKey)).status, 404)
    })
  })
}
