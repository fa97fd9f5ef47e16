import { sql } from 'kysely'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'
import { orderLookup } from '../fixtures/order-lookup.js'

// Real sessions of version 1 replayed against a draft whose error branch says something else: the
// report lists exactly the sessions that went through that branch, each with its first differing
// turn side by side, and the replay sends, moves and calls nothing.

// Enough for more than three of the runner's batches of 25, the last one partial.
const SESSIONS = 80
const SORRY = 'Sorry, the shop cannot be reached'
const CLOSED = 'Sorry, the shop is closed today'

for (const backend of apiBackends) {
  t.test(`replays on ${backend.name}`, async (t) => {
    const api = await startHttpsReceiver()
    t.teardown(() => api.close())
    const opened = await openTestApp(t, backend, {
      engine: true,
      calls: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: api.caFile },
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' }),
    })
    const { app, admin } = opened
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload ? { payload } : {}) })
      return { status: response.statusCode, json: response.body ? response.json() : undefined, location: response.headers.location }
    }
    const ok = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
      const response = await call(method, url, payload)
      if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.json)}`)
      return response.json
    }
    for (const name of ['order', 'status']) await ok('POST', '/v1/variables', { name, type: 'string' })
    await ok('POST', '/v1/variables', { name: 'httpStatus', type: 'number' })
    t.equal((await call('PUT', '/v1/secrets/shop', { value: 'tok-replays' })).status, 201)
    const definition = orderLookup(api.url)
    const flowId = (await ok('POST', '/v1/flows', { name: 'Orders', definition })).id as string

    // Every fourth call fails: those sessions leave by the error branch.
    api.respondWith(Array.from({ length: SESSIONS }, (_, i) => (i % 4 === 3 ? 500 : { status: 200, body: '{"status":"shipped"}', headers: { 'content-type': 'application/json' } })))
    const sorry = new Set<string>()
    for (let first = 0; first < SESSIONS; first += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
          await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: String(first + i) } })
          const said = await eventually(`the answer of ${sessionId}`, async () => {
            const events = (await ok('GET', `/v1/sessions/${sessionId}/events?size=50`)).content as { type: string; data: { output: { messages: { text?: { body: string } }[] } } }[]
            const turns = events.filter((e) => e.type === 'TurnCompleted')
            return turns.length === 2 ? turns[1]!.data.output.messages.map((m) => m.text?.body) : undefined
          })
          if (said[0] === SORRY) sorry.add(sessionId)
        }),
      )
    }
    t.ok(sorry.size > 0 && sorry.size < SESSIONS, `some sessions went through the error branch (${sorry.size}), the others did not`)
    await eventually('every session in the analytics', async () => {
      const { json } = await call('GET', `/v1/flows/${flowId}/analytics/versions`)
      return json.versions[0]?.sessions.total === SESSIONS ? true : undefined
    })

    const changed = { ...definition, nodes: definition.nodes.map((node) => (node.id === 'sorry' ? { ...node, data: { messages: [{ type: 'text', text: { body: CLOSED } }] } } : node)) }
    await ok('PUT', `/v1/flows/${flowId}/definition`, changed)

    const outsideReplays = async () => {
      const { rows } = await sql<{ n: string | number }>`select count(*) as n from events where stream_id not like 'replay-%'`.execute(opened.storage.db)
      const deliveries = await sql<{ n: string | number }>`select count(*) as n from webhook_deliveries`.execute(opened.storage.db)
      return { events: Number(rows[0]!.n), deliveries: Number(deliveries.rows[0]!.n), calls: api.requests.length }
    }
    const before = await outsideReplays()

    const asked = await call('POST', `/v1/flows/${flowId}/replays`, { version: 1, sessions: { last: SESSIONS } })
    t.equal(asked.status, 202, 'the replay is accepted at once')
    t.match(asked.json, { status: 'running', total: SESSIONS })
    t.equal(asked.location, `/v1/flows/${flowId}/replays/${asked.json.replayId}`)
    const report = await eventually('the replay to finish', async () => {
      const { json } = await call('GET', asked.location as string)
      return json.status === 'finished' ? json : undefined
    }, 120_000)

    t.match(report, { total: SESSIONS, checked: SESSIONS, version: 1, differingCount: sorry.size })
    t.same(new Set(report.differing.map((d: { sessionId: string }) => d.sessionId)), sorry, 'exactly the sessions that went through the changed branch')
    const first = report.differing[0]
    t.match(first, { turn: 1, recorded: { said: [SORRY], status: 'completed' }, replayed: { said: [CLOSED], status: 'completed' } }, 'each with its first differing turn side by side')
    t.match(first.trigger, { kind: 'message', text: /^\d+$/ }, 'and what the user said in it')
    t.same(await outsideReplays(), before, 'nothing was recorded on a session or card, nothing sent to a callback, and the API was not called')

    // The list is a read model: it follows the replay's events, so it may show the last batch a moment late.
    const listed = await eventually('the list to show the replay finished', async () => {
      const page = await ok('GET', `/v1/flows/${flowId}/replays`)
      return page.content[0]?.status === 'finished' ? page : undefined
    })
    t.match(listed.content, [{ id: asked.json.replayId, status: 'finished', total: SESSIONS, differingCount: sorry.size }], "the flow's replays list it")

    await t.test('the same draft as the version replays without a difference', async (t) => {
      await ok('PUT', `/v1/flows/${flowId}/definition`, definition)
      const again = await call('POST', `/v1/flows/${flowId}/replays`, { sessions: { last: 50, status: 'completed' } })
      t.equal(again.status, 202)
      const done = await eventually('the second replay', async () => {
        const { json } = await call('GET', again.location as string)
        return json.status === 'finished' ? json : undefined
      }, 60_000)
      t.match(done, { total: 50, checked: 50, differingCount: 0, differing: [] })
    })

    await t.test('requests the service refuses', async (t) => {
      t.match(await call('POST', `/v1/flows/${flowId}/replays`, { version: 9 }), { status: 400, json: { message: /versions 1 to 1/ } })
      t.match(await call('POST', `/v1/flows/${flowId}/replays`, { sessions: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } }), { status: 400 })
      t.match(await call('POST', `/v1/flows/${flowId}/replays`, { sessions: { last: 5001 } }), { status: 400 })
      const extra = await call('POST', `/v1/flows/${flowId}/replays`, { sessions: { last: 1, mood: 'x' }, colour: 'red' })
      t.equal(extra.status, 202, 'properties the request does not name are left out, not a 500')
      t.same((await call('GET', extra.location as string)).json.selection, { last: 1 })
      t.equal((await call('GET', `/v1/flows/${flowId}/replays/${flowId}`)).status, 404, 'no such replay')
    })
  })
}
