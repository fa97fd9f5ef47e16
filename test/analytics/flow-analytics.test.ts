import { randomUUID } from 'node:crypto'
import t from 'tap'
import { sessionStream } from '../../src/domain/session.js'
import type { ModelCall } from '../../src/domain/turn.js'
import { reachableBackends } from '../helpers/storage.js'
import { buildDataSet } from './data-set.js'

const zero = { reached: 0, answered: 0, endedHere: 0, waitingHere: 0, droppedOff: 0, failedHere: 0, completedHere: 0 }

for (const backend of reachableBackends) {
  t.test(`GET /v1/flows/{id}/analytics (${backend.name})`, async (t) => {
    const { test, flowId } = await buildDataSet(t, backend)
    const get = (url: string, key = test.admin.apiKey) => test.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })

    const all = await get(`/v1/flows/${flowId}/analytics`)
    t.equal(all.statusCode, 200, 'every session of the newest version')
    t.same(all.json(), {
      flowId,
      version: 1,
      dateRange: null,
      since: null,
      sessions: { total: 5, running: 1, completed: 3, timeout: 1, error: 0 },
      // A and B on 03-08, C and D on 03-09 (C timed out), E on 03-10 (still running).
      days: [
        { date: '2026-03-08', started: 2, completed: 2 },
        { date: '2026-03-09', started: 2, completed: 1 },
        { date: '2026-03-10', started: 1, completed: 0 },
      ],
      nodes: [
        { nodeId: 'start', type: 'start', ...zero, reached: 5 },
        { nodeId: 'greet', type: 'message', ...zero, reached: 5 },
        { nodeId: 'ask', type: 'question', ...zero, reached: 5, answered: 3, endedHere: 2, waitingHere: 1, droppedOff: 1 },
        { nodeId: 'to-sales', type: 'transfer', ...zero, reached: 2, endedHere: 2, completedHere: 2 },
        { nodeId: 'help', type: 'message', ...zero, reached: 1 },
        { nodeId: 'end', type: 'end', ...zero, reached: 1, endedHere: 1, completedHere: 1 },
      ],
      branches: [],
      // A's and B's reply turns on 03-08, D's second on 03-09 (see data-set.ts).
      modelUsage: {
        calls: 5,
        promptTokens: 1000,
        completionTokens: 225,
        days: [
          { date: '2026-03-08', calls: 4, promptTokens: 700, completionTokens: 165 },
          { date: '2026-03-09', calls: 1, promptTokens: 300, completionTokens: 60 },
        ],
        models: [
          { model: 'large', calls: 2, promptTokens: 700, completionTokens: 150 },
          { model: 'small', calls: 3, promptTokens: 300, completionTokens: 75 },
        ],
      },
    })

    // The same figures as the model calls the flow's sessions recorded in the log.
    const sessions = await test.storage.db.selectFrom('analytics_sessions').select('session_id').where('flow_id', '=', flowId).execute()
    const recorded: ModelCall[] = []
    for (const { session_id } of sessions) {
      for (const event of await test.store.readStream(sessionStream(session_id))) {
        if (event.type === 'TurnCompleted') recorded.push(...((event.data as { output: { modelCalls?: ModelCall[] } }).output.modelCalls ?? []))
      }
    }
    const sum = (calls: readonly ModelCall[]) => ({
      calls: calls.length,
      promptTokens: calls.reduce((total, call) => total + call.promptTokens, 0),
      completionTokens: calls.reduce((total, call) => total + call.completionTokens, 0),
    })
    t.ok(recorded.length > 0, 'the sessions recorded model calls')
    t.match(all.json().modelUsage, sum(recorded), "the totals are the sums of the sessions' recorded calls")
    for (const { model, ...figures } of all.json().modelUsage.models) t.same(figures, sum(recorded.filter((call) => call.model === model)), `${model}: the sums of its recorded calls`)

    // Now is 03-10 12:00 UTC (the workspace has no zone): today is 03-10, last7days from 03-04.
    const today = await get(`/v1/flows/${flowId}/analytics?version=1&dateRange=today`)
    t.equal(today.statusCode, 200, 'the sessions of today')
    t.match(today.json(), { dateRange: 'today', since: '2026-03-10T00:00:00.000Z', sessions: { total: 1, running: 1 } })
    t.same(today.json().days, [{ date: '2026-03-10', started: 1, completed: 0 }], 'the days of the range only')
    t.match(today.json().nodes[2], { nodeId: 'ask', reached: 1, answered: 0, waitingHere: 1 })
    t.same(today.json().modelUsage, { calls: 0, promptTokens: 0, completionTokens: 0, days: [], models: [] }, 'no model call today')
    t.match((await get(`/v1/flows/${flowId}/analytics?dateRange=last7days`)).json(), { since: '2026-03-04T00:00:00.000Z', sessions: { total: 5 } })

    for (const query of ['version=0', 'version=x', 'version=2', 'dateRange=yesterday']) {
      const bad = await get(`/v1/flows/${flowId}/analytics?${query}`)
      t.equal(bad.statusCode, 400, query)
      t.same(Object.keys(bad.json()).sort(), ['error', 'message', 'statusCode'], `${query}: the spec's error shape`)
    }
    t.match((await get(`/v1/flows/${flowId}/analytics?version=2`)).json().message, /no published version 2/)

    t.equal((await get(`/v1/flows/${randomUUID()}/analytics`)).statusCode, 404, 'an unknown flow')
    t.equal((await get(`/v1/flows/not-a-uuid/analytics`)).statusCode, 400, 'a malformed id')
    t.equal((await get(`/v1/flows/${flowId}/analytics`, 'wh_wrong')).statusCode, 401, 'a wrong key')

    // The embedded editor's bearer reads it (its workspace's flows only).
    const client = (await test.app.inject({ method: 'POST', url: '/v1/clients', headers: { 'x-api-key': test.admin.apiKey }, payload: { name: 'Editor' } })).json()
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
    const { ott } = (await test.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic } })).json()
    const tokens = (await test.app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott } })).json()
    const asEditor = await test.app.inject({ method: 'GET', url: `/v1/flows/${flowId}/analytics`, headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.equal(asEditor.statusCode, 200, "the editor's bearer")
    t.same(asEditor.json(), all.json(), 'the same answer as the key')

    // Another workspace of the same organization does not see the flow.
    const other = await test.app.inject({ method: 'POST', url: '/v1/workspaces', headers: { 'x-api-key': test.admin.apiKey }, payload: { name: 'Other' } })
    t.equal(other.statusCode, 201, 'another workspace')
    const otherKey = await test.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { 'x-api-key': test.admin.apiKey },
      payload: { name: 'other', workspaceId: String(other.headers.location).split('/').at(-1), callbackUrl: 'https://example.com/hook' },
    })
    t.equal(otherKey.statusCode, 201, 'a key of that workspace')
    t.equal((await get(`/v1/flows/${flowId}/analytics`, otherKey.json().apiKey)).statusCode, 404, "a flow outside the key's workspace")
  })
}
