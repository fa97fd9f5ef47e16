import { existsSync } from 'node:fs'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath as CLI } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { EXIT_TIMEOUT_MS, adminKey, running, startService, stopGracefully, storageKinds, within, type Service, type StorageKind } from '../helpers/service-process.js'
import { sleep } from '../helpers/wait.js'
import { REQUEST_TIMEOUT_MS, call, expect } from '../helpers/service-api.js'

// Acceptance: killing the service during a burst of webhook deliveries and starting it again,
// every turn is delivered at least once, none is lost; duplicates carry the same webhook-id.
//
// The receiver answers slowly, so at the kill some webhooks have arrived and others are on the
// wire or still queued. A delivery the killed process had claimed is retried by the next one when
// its claim runs out (WEBHOOK_LEASE_SECONDS, 2 s by default; no one renews it): that one may arrive
// twice.

const SESSIONS = 10
const MESSAGES = 10
const RECEIVER_DELAY_MS = 150
/** Kill once this many webhooks beyond the sessions' first ones have arrived. */
const KILL_AFTER = 25
const BURST_TIMEOUT_MS = 30_000
/** The killed process's claims run out (2 s), then the rest goes out; the rest of the time is a loaded machine's. */
const REDELIVERY_TIMEOUT_MS = 45_000

const WEBHOOK_ENV = {
  WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1',
}

/** Retries `probe` (bounded) until it answers; for reads that follow a write through a read model. */
async function eventually<T>(service: Service, what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (!running(service)) throw new Error(`the service exited while waiting for ${what}; output:\n${service.output()}`)
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; output:\n${service.output()}`)
    await sleep(50)
  }
}

interface Received {
  request: ReceivedRequest
  webhookId: string
  sessionId: string
  messageId: string
}

const parse = (request: ReceivedRequest): Received => {
  const body = JSON.parse(request.body) as { sessionId: string; messageId: string }
  return { request, webhookId: String(request.headers['webhook-id']), sessionId: body.sessionId, messageId: body.messageId }
}

const headersOf = (request: ReceivedRequest) => Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))

/** The ids in the order they first appear. */
const firstArrivals = (ids: string[]) => [...new Set(ids)]

interface Burst {
  /** Per session, the messageIds answered 202, in send order. */
  accepted: Map<string, string[]>
  /** Failures before the kill: none are expected. */
  unexpected: string[]
  /** Receiver requests when the kill was sent. */
  receivedAtKill: number
  sendsInFlightAtKill: number
}

/**
 * Sends MESSAGES messages into every session, the sessions side by side and each session's in
 * order; SIGKILLs the service once KILL_AFTER burst webhooks have arrived at the receiver while an
 * accepted turn has not.
 */
async function burstUntilKilled(service: Service, apiKey: string, sessionIds: string[], receiver: HttpsReceiver, alreadyReceived: number): Promise<Burst> {
  const accepted = new Map(sessionIds.map((id) => [id, [] as string[]]))
  const unexpected: string[] = []
  let killed = false
  let receivedAtKill = -1
  let inFlight = 0
  let sendsInFlightAtKill = 0

  // The kill must land mid-burst: enough webhooks have arrived and an accepted turn has not.
  const arrived = new Set<string>()
  let seen = 0
  const midBurst = () => {
    for (const request of receiver.requests.slice(seen)) arrived.add(parse(request).messageId)
    seen = receiver.requests.length
    return seen >= alreadyReceived + KILL_AFTER && [...accepted.values()].some((ids) => ids.some((id) => !arrived.has(id)))
  }
  const watcher = (async () => {
    const deadline = Date.now() + BURST_TIMEOUT_MS
    while (!midBurst() && Date.now() < deadline && running(service)) await sleep(5)
    if (!midBurst()) unexpected.push(`no kill mid-burst within ${BURST_TIMEOUT_MS} ms (${receiver.requests.length - alreadyReceived} burst webhooks arrived); output:\n${service.output()}`)
    killed = true
    receivedAtKill = receiver.requests.length
    sendsInFlightAtKill = inFlight
    service.child.kill('SIGKILL')
  })()

  const send = async (sessionId: string) => {
    for (let i = 1; i <= MESSAGES && !killed; i++) {
      inFlight++
      try {
        const reply = await call(service, apiKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${i}` } })
        if (reply.status === 202 && typeof reply.body?.messageId === 'string') accepted.get(sessionId)!.push(reply.body.messageId)
        else if (!killed) unexpected.push(`${sessionId} m${i}: ${reply.status} ${JSON.stringify(reply.body)}`)
      } catch (error) {
        // After the kill a failed request is simply not accepted.
        if (!killed) unexpected.push(`${sessionId} m${i}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error)}`)
      } finally {
        inFlight--
      }
    }
  }

  await within(Promise.all([watcher, ...sessionIds.map(send)]), BURST_TIMEOUT_MS + 2 * REQUEST_TIMEOUT_MS, () => 'the burst did not end')
  return { accepted, unexpected, receivedAtKill, sendsInFlightAtKill }
}

/** Every delivery of the key's workspace, from the deliveries API. */
async function allDeliveries(service: Service, apiKey: string): Promise<{ id: string; messageId: string; sessionId: string; status: string }[]> {
  const all = []
  for (let page = 0; page < 100; page++) {
    const body = await expect(service, apiKey, 200, 'GET', `/v1/webhooks/deliveries?size=100&page=${page}`)
    all.push(...body.content)
    if (body.last) return all
  }
  throw new Error('more than 100 pages of deliveries')
}

async function killDuringDeliveries(t: Test, storage: StorageKind) {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const setup = await storage.prepare(t, { ...WEBHOOK_ENV, WEBHOOK_CA_FILE: receiver.caFile })

  const first = await startService(t, setup.env)
  const admin = await adminKey(setup, first)
  const { apiKey, signingSecret } = await expect(first, admin, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  await expect(first, apiKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await expect(first, apiKey, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })

  // Each session's start turn goes out first; the burst's webhooks queue behind the slow receiver.
  receiver.delay(RECEIVER_DELAY_MS)
  const sessionIds: string[] = await Promise.all(
    Array.from({ length: SESSIONS }, async () => (await expect(first, apiKey, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string),
  )
  const startMessage = new Map<string, string>()
  for (const sessionId of sessionIds) {
    const events = (await expect(first, apiKey, 200, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { type: string; data: { messageId: string } }[]
    startMessage.set(sessionId, events.find((e) => e.type === 'SessionStarted')!.data.messageId)
  }
  const beforeBurst = receiver.requests.length

  const burst = await burstUntilKilled(first, apiKey, sessionIds, receiver, beforeBurst)
  t.same(burst.unexpected, [], 'every send before the kill was accepted with 202 and a messageId')
  const killedExit = await within(first.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')
  t.equal(killedExit.signal, 'SIGKILL', 'the first process died of SIGKILL')

  const expected = new Set([...startMessage.values(), ...[...burst.accepted.values()].flat()])
  const acceptedCount = expected.size - SESSIONS
  const arrivedAtKill = new Set(receiver.requests.slice(0, burst.receivedAtKill).map((r) => parse(r).messageId))
  const missingAtKill = [...expected].filter((id) => !arrivedAtKill.has(id)).length
  t.ok(burst.receivedAtKill - beforeBurst >= KILL_AFTER, `burst webhooks had arrived at the kill (${burst.receivedAtKill - beforeBurst})`)
  t.ok(missingAtKill > 0, `some accepted turns had not arrived at the kill (${missingAtKill} of ${expected.size})`)

  const second = await startService(t, setup.env)
  t.notMatch(second.stdout(), /X-Api-Key\s+wh_/, 'the restart did not bootstrap again')
  const delivered = await eventually(second, 'every turn at the receiver and no delivery left open', REDELIVERY_TIMEOUT_MS, async () => {
    const arrived = new Set(receiver.requests.map((r) => parse(r).messageId))
    if ([...expected].some((id) => !arrived.has(id))) return undefined
    const deliveries = await allDeliveries(second, apiKey)
    return deliveries.every((d) => d.status === 'delivered' || d.status === 'dead') ? deliveries : undefined
  }).catch((error: unknown) => {
    const arrived = new Set(receiver.requests.map((r) => parse(r).messageId))
    t.fail(`${[...expected].filter((id) => !arrived.has(id)).length} accepted turns never arrived: ${assertionMessage(error, { maxLength: Infinity })}`)
    return undefined
  })
  const exit = await stopGracefully(second)
  t.same(exit, { code: 0, signal: null }, 'the restarted service stops cleanly on SIGTERM', { output: second.output() })
  // Anything still on its way (a repeat after "delivered" would be a bug) is counted: with both
  // processes gone and no connection left open, the receiver has read all they sent.
  const settled = Date.now() + EXIT_TIMEOUT_MS
  while ((await receiver.openConnections()) > 0 && Date.now() < settled) await sleep(20)
  t.equal(await receiver.openConnections(), 0, 'the receiver has read everything sent to it')
  if (!delivered) return

  const webhooks = receiver.requests.map(parse)
  const arrived = new Set(webhooks.map((w) => w.messageId))
  t.same([...expected].filter((id) => !arrived.has(id)), [], 'every accepted message and every start turn arrived in at least one webhook')
  t.same(
    delivered.filter((d) => d.status !== 'delivered').map((d) => `${d.id} ${d.status}`),
    [],
    'every delivery ended delivered (turns of sends whose 202 the kill cut off included)',
  )
  const receivedIds = new Set(webhooks.map((w) => w.webhookId))
  t.same(delivered.filter((d) => !receivedIds.has(d.id)).map((d) => d.id), [], "every delivery's webhook-id arrived at the receiver")
  t.equal(new Set(delivered.map((d) => d.messageId)).size, delivered.length, 'one delivery per turn')

  const unverified = webhooks.filter((w) => {
    try {
      new Webhook(signingSecret).verify(w.request.body, headersOf(w.request))
      return false
    } catch {
      return true
    }
  })
  t.same(unverified.map((w) => w.webhookId), [], 'every webhook verifies with standardwebhooks against the key’s signing secret')
  t.ok(webhooks.every((w) => w.request.method === 'POST' && w.request.path === '/hooks'), 'every webhook is a POST to the callback path')

  const idsByMessage = new Map<string, Set<string>>()
  const bodiesById = new Map<string, Set<string>>()
  for (const w of webhooks) {
    idsByMessage.set(w.messageId, (idsByMessage.get(w.messageId) ?? new Set()).add(w.webhookId))
    bodiesById.set(w.webhookId, (bodiesById.get(w.webhookId) ?? new Set()).add(w.request.body))
  }
  t.same(
    [...idsByMessage].filter(([, ids]) => ids.size !== 1).map(([messageId, ids]) => `${messageId}: ${[...ids].join(', ')}`),
    [],
    'one webhook-id per turn: every repeat of a turn carries the same webhook-id',
  )
  t.same(
    [...bodiesById].filter(([, bodies]) => bodies.size !== 1).map(([id]) => id),
    [],
    'every repeat of a webhook-id carries the same body',
  )

  for (const sessionId of sessionIds) {
    const known = new Set([startMessage.get(sessionId)!, ...burst.accepted.get(sessionId)!])
    const order = firstArrivals(webhooks.filter((w) => w.sessionId === sessionId).map((w) => w.messageId)).filter((id) => known.has(id))
    t.same(order, [startMessage.get(sessionId), ...burst.accepted.get(sessionId)!], `session ${sessionId}: the first arrivals of its turns are in send order`)
  }

  const duplicates = webhooks.length - arrived.size
  const unacknowledged = [...arrived].filter((id) => !expected.has(id)).length
  t.comment(
    `${storage.name}: ${acceptedCount} messages accepted in ${SESSIONS} sessions (+${SESSIONS} start turns), ` +
      `${burst.receivedAtKill} webhooks received at the kill (${burst.receivedAtKill - beforeBurst} of the burst), ${burst.sendsInFlightAtKill} sends in flight at the kill; ` +
      `${webhooks.length} received in all for ${arrived.size} turns: ${duplicates} duplicates (same webhook-id), ` +
      `${unacknowledged} turns of sends the kill cut off before their 202`,
  )
}

t.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`)
})

for (const storage of storageKinds) {
  t.test(`SIGKILL during a burst of webhook deliveries on ${storage.name}: every turn arrives at least once, repeats share their webhook-id`, async (t) => {
    await killDuringDeliveries(t, storage)
  })
}
