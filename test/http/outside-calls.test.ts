import { sql } from 'kysely'
import { loadConfig } from '../../src/config.js'
import t, { type Test } from 'tap'
import { CALL_LIMITS } from '../../src/domain/outside-call.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'
import { replayedTurns } from '../helpers/replay.js'
import { orderLookup } from '../fixtures/order-lookup.js'
import { capturedLogs } from '../helpers/captured-logs.js'

const SHOP_TOKEN = 'tok-Sh0p-7f3a9c'

interface Arranged {
  call: (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers?: Record<string, string>) => Promise<{ status: number; body: string; json: any }>
  /** Starts a session of the flow, answers the question with `order` and waits for the flow's answer. */
  lookUp: (flowId: string, order: string) => Promise<{ sessionId: string; detail: any; said: string[]; events: any[] }>
  flowOf: (definition: object) => Promise<string>
}

async function arrange(t: Test, opened: TestApp): Promise<Arranged> {
  const { app, admin } = opened
  const call: Arranged['call'] = async (method, url, payload, headers = {}) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey, ...headers }, ...(payload ? { payload } : {}) })
    return { status: response.statusCode, body: response.body, json: response.body ? response.json() : undefined }
  }
  const ok = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await call(method, url, payload)
    if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${response.body}`)
    return response.json
  }
  await ok('POST', '/v1/variables', { name: 'order', type: 'string' })
  await ok('POST', '/v1/variables', { name: 'status', type: 'string' })
  await ok('POST', '/v1/variables', { name: 'httpStatus', type: 'number' })
  t.equal((await call('PUT', '/v1/secrets/shop', { value: SHOP_TOKEN })).status, 201, 'the shop token is kept as a secret')
  const flowOf = async (definition: object) => (await ok('POST', '/v1/flows', { name: `Orders ${Math.random()}`, definition })).id as string
  const lookUp: Arranged['lookUp'] = async (flowId, order) => {
    const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
    await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: order } })
    const detail = await eventually(`the answer of session ${sessionId}`, async () => {
      const current = await ok('GET', `/v1/sessions/${sessionId}`)
      return current.pendingMessages === 0 ? current : undefined
    })
    const events = (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
    const said = events
      .filter((e: { type: string }) => e.type === 'TurnCompleted')
      .flatMap((e: { data: { output: { messages: { text?: { body: string } }[] } } }) => e.data.output.messages.map((m) => m.text?.body ?? ''))
    return { sessionId, detail, said, events }
  }
  return { call, lookUp, flowOf }
}

for (const backend of apiBackends) {
  t.test(`a flow looks up an order on an HTTPS API, on ${backend.name}`, async (t) => {
    const api: HttpsReceiver = await startHttpsReceiver()
    t.teardown(() => api.close())
    const logs = capturedLogs()
    const opened = await openTestApp(t, backend, {
      engine: true,
      calls: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: api.caFile },
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: api.caFile }),
      logger: logs.logger,
    })
    const { call, lookUp, flowOf } = await arrange(t, opened)
    const flowId = await flowOf(orderLookup(api.url))

    api.respondWith([{ status: 200, body: JSON.stringify({ id: '1234', status: 'shipped' }), headers: { 'content-type': 'application/json' } }])
    const shipped = await lookUp(flowId, '1234')
    t.same(shipped.said, ['Your order number?', 'Your order is shipped'], 'the flow answers with the status the API gave')
    t.equal(api.requests.length, 1, 'one call')
    t.equal(api.requests[0]!.path, '/orders/1234')
    t.equal(api.requests[0]!.headers.authorization, `Bearer ${SHOP_TOKEN}`, 'the API saw the bearer value')
    const answered = shipped.events.find((e: { type: string }) => e.type === 'OutsideCallAnswered')
    t.match(answered?.data, { nodeId: 'lookup', request: { method: 'GET', url: `${api.url}/orders/1234` }, answer: { status: 200 } }, 'the session records the call and its answer')
    t.same(answered.data.request.headers, [{ name: 'Authorization', value: 'Bearer {{secrets.shop}}' }], 'the recorded request names the secret, never its value')

    await t.test('the secret is nowhere but in the request sent', async (t) => {
      const transcript = await call('GET', `/v1/sessions/${shipped.sessionId}/transcript`)
      const events = await call('GET', `/v1/sessions/${shipped.sessionId}/events?size=500`)
      for (const [what, text] of [['the events API', events.body], ['the transcript', transcript.body], ['the secrets list', (await call('GET', '/v1/secrets')).body]] as const) {
        t.notOk(text.includes(SHOP_TOKEN), `${what} does not hold the secret`)
      }
      const raw = await sql<{ text: string }>`select data::text || metadata::text as text from events`.execute(opened.storage.db)
      t.ok(raw.rows.length > 0)
      t.notOk(raw.rows.some((row) => row.text.includes(SHOP_TOKEN)), "the event store's rows do not hold the secret")
      t.notOk(logs.text().includes(SHOP_TOKEN), 'no log line holds the secret')
    })

    await t.test('every failure leaves by error', async (t) => {
      api.respondWith([500])
      t.same((await lookUp(flowId, '1')).said.at(-1), 'Sorry, the shop cannot be reached', 'a 500')

      const slow = await flowOf(orderLookup(api.url, { timeoutMs: CALL_LIMITS.timeoutMs.min }))
      api.delay(2000)
      const timedOut = await lookUp(slow, '2')
      api.delay(0)
      t.same(timedOut.said.at(-1), 'Sorry, the shop cannot be reached', 'a timeout')
      t.match(timedOut.events.find((e: { type: string }) => e.type === 'OutsideCallAnswered')?.data.answer, { error: 'timeout' })

      const elsewhere = await flowOf(orderLookup(api.url.replace('127.0.0.1', '127.0.0.2')))
      const refused = await lookUp(elsewhere, '3')
      t.same(refused.said.at(-1), 'Sorry, the shop cannot be reached', 'a loopback address outside the allow-list')
      t.match(refused.events.find((e: { type: string }) => e.type === 'OutsideCallAnswered')?.data.answer, { error: 'refused_address' })

      api.respondWith([{ status: 200, body: JSON.stringify({ status: 'x'.repeat(CALL_LIMITS.responseBytes) }) }])
      const large = await lookUp(flowId, '4')
      t.same(large.said.at(-1), 'Sorry, the shop cannot be reached', 'an answer over the size limit')
      t.match(large.events.find((e: { type: string }) => e.type === 'OutsideCallAnswered')?.data.answer, { error: 'too_large' })

      api.respondWith([{ status: 200, body: JSON.stringify({ state: 'shipped' }) }])
      const unmatched = await lookUp(flowId, '5')
      t.same(unmatched.said.at(-1), 'Sorry, the shop cannot be reached', 'a path that matches nothing')
      t.match(unmatched.detail, { status: 'completed' })

      const noErrorEdge = await flowOf(orderLookup(api.url, {}, false))
      api.respondWith([503])
      const ended = await lookUp(noErrorEdge, '6')
      t.equal(ended.detail.status, 'error', 'without an error edge the session ends in error')
      const log = await eventually('the log to show the session ended', async () => {
        const found = (await call('GET', `/v1/sessions/logs?sessionId=${ended.sessionId}`)).json.content[0]
        return found?.status === 'running' ? undefined : found
      })
      t.equal(log.status, 'error', 'the log shows it')
    })

    await t.test('"try it" makes the call once and records nothing', async (t) => {
      api.respondWith([{ status: 200, body: JSON.stringify({ order: { status: 'packed' } }), headers: { 'content-type': 'application/json' } }])
      const before = api.requests.length
      const node = orderLookup(api.url).nodes.find((n) => n.id === 'lookup')!.data
      const tried = await call('POST', '/v1/http-requests/try', { request: node, variables: { order: '9 9' } })
      t.equal(tried.status, 200)
      t.match(tried.json, { request: { method: 'GET', url: `${api.url}/orders/9%209` }, answer: { status: 200, body: /packed/ } })
      t.same(tried.json.request.headers, [{ name: 'Authorization', value: 'Bearer {{secrets.shop}}' }])
      t.equal(api.requests.length, before + 1)
      t.equal(api.requests.at(-1)!.headers.authorization, `Bearer ${SHOP_TOKEN}`)
      t.notOk(tried.body.includes(SHOP_TOKEN))
      const refused = await call('POST', '/v1/http-requests/try', { request: { ...node, url: 'http://example.com/' } })
      t.equal(refused.status, 400, 'a URL that is not https')
      t.match(refused.json.message, /https/)
      const other = await call('POST', '/v1/http-requests/try', { request: { method: 'GET' } })
      t.equal(other.status, 400, 'data that is not an httpRequest node')
    })

    await t.test('a secret can be read only where a call is made', async (t) => {
      const leaky = orderLookup(api.url)
      leaky.nodes.find((n) => n.id === 'found')!.data = { messages: [{ type: 'text', text: { body: 'Token {{secrets.shop}}' } }] }
      const refused = await call('POST', '/v1/flows', { name: 'Leaky', definition: leaky })
      t.equal(refused.status, 400)
      t.match(refused.json.message, /\{\{secrets\.shop\}\} in node "found"/, 'the problem names the node')
    })

    await t.test('a missing secret leaves by error, naming it', async (t) => {
      t.equal((await call('DELETE', '/v1/secrets/shop')).status, 204)
      const before = api.requests.length
      const missing = await lookUp(flowId, '7')
      t.same(missing.said.at(-1), 'Sorry, the shop cannot be reached')
      t.match(missing.events.find((e: { type: string }) => e.type === 'OutsideCallAnswered')?.data.answer, { error: 'secret', message: /shop/ })
      t.equal(api.requests.length, before, 'nothing is sent without the secret')
      t.equal((await call('PUT', '/v1/secrets/shop', { value: SHOP_TOKEN })).status, 201)
    })

    await t.test('audit verify replays every turn with the API down, calling nothing', async (t) => {
      await api.down()
      t.teardown(() => api.up())
      const calls = api.requests.length
      const sessions = await opened.storage.db.selectFrom('session_logs').select('id').where('flow_id', 'in', [flowId]).execute()
      t.ok(sessions.length >= 5)
      const turns = await replayedTurns(t, opened.store, sessions.map((session) => session.id))
      t.ok(turns >= sessions.length * 2, 'every turn was replayed')
      t.equal(api.requests.length, calls, 'the API counted no new call')
    })
  })
}
