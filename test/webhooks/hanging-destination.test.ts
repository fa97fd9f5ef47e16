import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Acceptance of fair delivery against a real HTTPS receiver: one organization's callback accepts
// the connection and never answers. Another organization's webhooks go out while its attempts
// hang, to the same origin even; the hanging destination becomes failing and says so; once it
// answers again, every delivery it held arrives, in order per session, each answered once.

const LOOPBACK = ['127.0.0.1/32']
const RESPONSE_TIMEOUT_MS = 4_000
/** Longer than the response timeout: the dispatcher gives up on the request first. */
const HANG_MS = RESPONSE_TIMEOUT_MS + 1_000
const HANGING_SESSIONS = 12

const webhookId = (request: ReceivedRequest) => String(request.headers['webhook-id'])
const bodyOf = (request: ReceivedRequest) => JSON.parse(request.body) as { sessionId: string; messageId: string }

for (const backend of reachableBackends) {
  t.test(`a hanging destination costs its own tenant only, on ${backend.name}`, async (t) => {
    const receiver = await startHttpsReceiver()
    t.teardown(() => receiver.close())
    const config = loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: LOOPBACK.join(','), RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' })
    const { app, admin, ctx, storage } = await openTestApp(t, backend, {
      config,
      engine: true,
      webhooks: {
        allowedPrivateCidrs: LOOPBACK,
        caFile: receiver.caFile,
        // Fewer slots than the hanging sessions: one global queue would give them all to the hanging destination.
        concurrency: 6,
        perDestination: 3,
        responseTimeoutMs: RESPONSE_TIMEOUT_MS,
        health: { failuresBeforeFailing: 3, probeSchedule: [0.5] },
        retrySchedule: Array.from({ length: 30 }, () => 0.2),
      },
    })
    const call = async (apiKey: string, method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload && { payload }) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    const echoFlowOf = async (apiKey: string) => {
      await call(apiKey, 'POST', '/v1/variables', { name: 'said', type: 'string' })
      return (await call(apiKey, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })).id as string
    }

    // The hanging tenant: its key's callback never answers within the timeout.
    receiver.delay(HANG_MS, '/hanging')
    const hangingKey = (await call(admin.apiKey, 'POST', '/v1/api-keys', { name: 'hangs', callbackUrl: `${receiver.url}/hanging` })).apiKey as string
    const hangingFlow = await echoFlowOf(hangingKey)
    const hangingSessions: string[] = []
    for (let i = 0; i < HANGING_SESSIONS; i++) hangingSessions.push((await call(hangingKey, 'POST', `/v1/sessions/flows/${hangingFlow}/create`, {})).sessionId)
    await eventually('the hanging destination holds its room of attempts', () => (receiver.requests.filter((r) => r.path === '/hanging').length >= 3 ? true : undefined))

    // Another organization, whose callback is on the same origin: another destination all the same.
    const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: `${receiver.url}/other` }, { allowedPrivateCidrs: LOOPBACK })
    const otherFlow = await echoFlowOf(other.apiKey)
    const otherSessions: string[] = []
    for (let i = 0; i < 4; i++) otherSessions.push((await call(other.apiKey, 'POST', `/v1/sessions/flows/${otherFlow}/create`, {})).sessionId)
    const otherGreetings = await eventually('the other organization’s greetings', () => {
      const arrived = receiver.requests.filter((r) => r.path === '/other' && r.answered)
      return arrived.length >= otherSessions.length ? arrived : undefined
    })
    t.same(new Set(otherGreetings.map((r) => bodyOf(r).sessionId)), new Set(otherSessions), 'every session of the other organization got its greeting')
    const hangingAttemptsEnded = await storage.db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('webhook_deliveries.workspace_id', '=', admin.workspaceId)
      .executeTakeFirstOrThrow()
    t.equal(Number(hangingAttemptsEnded.n), 0, 'while the first attempts to the hanging destination were all still waiting for an answer')

    const failing = await eventually('the hanging destination is failing', async () => {
      const page = await call(admin.apiKey, 'GET', '/v1/webhooks/destinations?state=failing')
      return page.content.length > 0 ? page.content[0] : undefined
    })
    t.match(failing, { destination: receiver.url, state: 'failing', lastError: /^timeout: no complete response within 4 s/ }, 'the API says which origin fails, and why')
    t.ok(failing.heldDeliveries >= HANGING_SESSIONS - 3, 'holding the deliveries of its sessions')
    t.same((await call(other.apiKey, 'GET', '/v1/webhooks/destinations')).content, [], 'the other organization’s destination on the same origin never failed')

    const listed = await call(hangingKey, 'GET', `/v1/webhooks/deliveries?sessionId=${hangingSessions.at(-1)}`)
    t.equal(listed.content[0].heldByDestination, true, 'its deliveries say they are held by the failing destination')

    // A message into each hanging session while the destination fails: a second delivery each, held behind the first.
    for (const sessionId of hangingSessions) await call(hangingKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `hello ${sessionId}` } })

    receiver.delay(0, '/hanging')
    const answered = await eventually(
      'every held delivery answered once the destination answers again',
      () => {
        const done = receiver.requests.filter((r) => r.path === '/hanging' && r.answered)
        return new Set(done.map(webhookId)).size >= 2 * HANGING_SESSIONS ? done : undefined
      },
      60_000,
    )
    const ids = answered.map(webhookId)
    t.equal(new Set(ids).size, ids.length, 'none answered twice')
    for (const sessionId of hangingSessions) {
      const bodies = answered.filter((r) => bodyOf(r).sessionId === sessionId).map((r) => JSON.parse(r.body) as { changes: unknown[] })
      t.equal(bodies.length, 2, `session ${sessionId.slice(0, 8)}: its greeting and its reply`)
      t.match(JSON.stringify(bodies[1]), `hello ${sessionId}`, 'in the order of its turns')
    }
    // The last answers may still be on their way to being recorded.
    const restored = await eventually('every delivery recorded as delivered', async () => {
      const page = await call(admin.apiKey, 'GET', '/v1/webhooks/destinations')
      return page.content[0]?.heldDeliveries === 0 ? page : undefined
    })
    t.equal(restored.content.length, 1)
    t.match(restored.content[0], { destination: receiver.url, state: 'healthy', heldDeliveries: 0 }, 'restored')
    t.match(restored.content[0].lastError, /^timeout: no complete response/, 'its last error kept on record')
  })
}
