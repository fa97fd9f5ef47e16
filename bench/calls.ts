// Benchmark 8, turns that call an API: how many turns a second the service completes when each
// turn makes one httpRequest to a local HTTPS API, against the same turns without the call. The
// service runs as a child process on a fresh Postgres database; the API runs in this process on
// 127.0.0.1 (allowed with WEBHOOK_ALLOWED_PRIVATE_CIDRS, trusted with WEBHOOK_CA_FILE) and answers
// at once. Each session asks for an order number; one message to each session (32 in flight) makes
// one turn, which calls the API (or not), records the answer and replies. The figure is turns
// completed per second, from the first message to the last turn recorded.

import { createServer } from 'node:https'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { Api, inParallel } from './lib/api.js'
import { makeLocalCertificate } from './lib/certificate.js'
import { createBenchDatabase } from './lib/db.js'
import { bootstrap, sleep, startService } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import type { BenchmarkRun } from './run.js'

export interface CallsSettings {
  /** Sessions, one turn each. */
  sessions: number
  /** Messages in flight at once. */
  connections: number
  /** How long the last turns are waited for. */
  drainSeconds: number
}

export const defaultCallsSettings: CallsSettings = { sessions: 2000, connections: 32, drainSeconds: 120 }

/** Asks for an order number, then (with `apiUrl`) looks the order up and answers with its status. */
const orderFlow = (apiUrl: string | undefined) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Your order number?' } }, input: { kind: 'text' }, saveAs: 'order' } },
    ...(apiUrl
      ? [{ id: 'lookup', type: 'httpRequest', position: { x: 400, y: 0 }, data: { method: 'GET', url: `${apiUrl}/orders/{{order}}`, saveResponse: [{ path: '$.status', variable: 'status' }] } }]
      : [{ id: 'lookup', type: 'setVariable', position: { x: 400, y: 0 }, data: { variable: 'status', value: 'shipped' } }]),
    { id: 'found', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Your order {{order}} is {{status}}' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'lookup' },
    { id: 'c', source: 'lookup', sourceHandle: apiUrl ? 'success' : null, target: 'found' },
  ],
})

interface Phase {
  turnsPerSecond: number
  seconds: number
  turns: number
  apiRequests: number
}

export async function calls(settings: CallsSettings, notes: string[]): Promise<BenchmarkRun> {
  const certificate = makeLocalCertificate()
  let apiRequests = 0
  const api = createServer({ key: readFileSync(certificate.keyFile), cert: readFileSync(certificate.certFile) }, (request, response) => {
    apiRequests++
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'shipped' }))
  })
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
  const apiUrl = `https://127.0.0.1:${(api.address() as AddressInfo).port}`
  try {
    // The turns without a call first, each phase on a fresh database and service.
    const without = await phase(settings, undefined, certificate.certFile, () => 0)
    const withCall = await phase(settings, apiUrl, certificate.certFile, () => apiRequests)
    if (withCall.apiRequests < withCall.turns) notes.push(`the API counted ${withCall.apiRequests} requests for ${withCall.turns} turns`)
    return {
      settings: { ...settings },
      figures: [
        figure('turns_with_call_per_s', 'turns with one HTTP call', round(withCall.turnsPerSecond, 1), 'turns/s'),
        figure('turns_without_call_per_s', 'the same turns without the call', round(without.turnsPerSecond, 1), 'turns/s'),
        figure('call_cost_ratio', 'with ÷ without', round(withCall.turnsPerSecond / without.turnsPerSecond, 3), ''),
      ],
      details: { withCall, without },
    }
  } finally {
    await new Promise((resolve) => api.close(resolve))
    await certificate.remove()
  }
}

async function phase(settings: CallsSettings, apiUrl: string | undefined, apiCertificate: string, requestsSoFar: () => number): Promise<Phase> {
  const db = await createBenchDatabase('calls')
  const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-calls-'))
  const { apiKey } = await bootstrap(db.url, dataDir)
  const service = await startService({ databaseUrl: db.url, dataDir, env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: apiCertificate, RATE_LIMIT_PER_MINUTE: '0' } })
  try {
    const client = new Api(service.base, apiKey)
    await client.call('POST', '/v1/variables', 201, { name: 'order', type: 'string' })
    await client.call('POST', '/v1/variables', 201, { name: 'status', type: 'string' })
    const flow = await client.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Orders', definition: orderFlow(apiUrl) })
    const sessions = await inParallel(settings.sessions, settings.connections, async () => (await client.call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, 201)).sessionId)
    const turnsNow = async () => Number((await db.query<{ n: string }>(`select count(*) as n from events where event_type = 'TurnCompleted'`)).rows[0]!.n)
    // Every session's first turn (its question) is recorded before the clock starts.
    while ((await turnsNow()) < settings.sessions) await sleep(100)
    const before = requestsSoFar()
    const started = performance.now()
    await inParallel(settings.sessions, settings.connections, (i) => client.call('POST', `/v1/sessions/${sessions[i]}/message`, 202, { type: 'text', text: { body: String(1000 + i) } }))
    const deadline = Date.now() + settings.drainSeconds * 1000
    let turns = 0
    while ((turns = (await turnsNow()) - settings.sessions) < settings.sessions && Date.now() < deadline) await sleep(50)
    const seconds = (performance.now() - started) / 1000
    return { turnsPerSecond: turns / seconds, seconds: round(seconds, 2), turns, apiRequests: requestsSoFar() - before }
  } finally {
    await service.stop()
    await db.drop()
  }
}
