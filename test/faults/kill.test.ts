import { existsSync } from 'node:fs'
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { openStorage, type DatabaseTarget } from '../../src/store/connect.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath as CLI } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { EXIT_TIMEOUT_MS, adminKey, answers, running, startService, stopGracefully, storageKinds, until, within, type Service, type StorageKind } from '../helpers/service-process.js'
import { REQUEST_TIMEOUT_MS, call, expect } from '../helpers/service-api.js'
import { sleep } from '../helpers/wait.js'

// Acceptance: killing the service with SIGKILL while it appends and while it delivers webhooks, then
// starting it again: no acknowledged event is lost and every event is projected exactly once; every
// turn is delivered at least once, none is lost, and a repeat carries the same webhook-id.
//
// One process takes both loads, and each is checked on its own after the one kill and restart:
// several loops create workspaces while a burst of messages goes into sessions whose webhooks a
// slow receiver answers. The SIGKILL comes once enough creations are acknowledged and enough of the
// burst's webhooks have arrived, with creations and sends in flight and accepted turns still to
// arrive: some webhooks are on the wire, others still queued. A delivery the killed process had
// claimed is retried by the next one when its claim runs out (WEBHOOK_LEASE_SECONDS, 2 s by
// default; no one renews it): that one may arrive twice.

const SESSIONS = 10
/** A bound: each session's messages go on until the kill. */
const MESSAGES = 50
const RECEIVER_DELAY_MS = 150
/** Kill once this many webhooks beyond the sessions' first ones have arrived. */
const KILL_AFTER = 25
const BURST_TIMEOUT_MS = 30_000
const CREATION_LOOPS = 8
const ACKS_BEFORE_KILL = 40
const READY_TIMEOUT_MS = 10_000
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

interface Loads {
  /** Per session, the messageIds answered 202, in send order. */
  accepted: Map<string, string[]>
  /** The workspaces whose creation was answered 201 with their Location. */
  created: string[]
  /** Failures of sends before the kill: none are expected. */
  unexpectedSends: string[]
  /** Failures of creations before the kill: none are expected. */
  unexpectedCreations: string[]
  /** Receiver requests when the kill was sent. */
  receivedAtKill: number
  sendsInFlightAtKill: number
  creationsInFlightAtKill: number
}

/**
 * Sends messages into every session, the sessions side by side and each session's in order, and
 * creates workspaces from CREATION_LOOPS concurrent loops (only a 201 with its Location counts).
 * SIGKILLs the service once ACKS_BEFORE_KILL creations are acknowledged and KILL_AFTER burst
 * webhooks have arrived, while an accepted turn has not, and sends and creations are in flight.
 */
async function loadUntilKilled(service: Service, botKey: string, organizationKey: string, sessionIds: string[], receiver: HttpsReceiver, alreadyReceived: number): Promise<Loads> {
  const accepted = new Map(sessionIds.map((id) => [id, [] as string[]]))
  const created: string[] = []
  const unexpectedSends: string[] = []
  const unexpectedCreations: string[] = []
  let killed = false
  let receivedAtKill = -1
  let sendsInFlight = 0
  let creationsInFlight = 0
  let sendsInFlightAtKill = 0
  let creationsInFlightAtKill = 0

  // The kill must land mid-burst: enough webhooks have arrived and an accepted turn has not.
  const arrived = new Set<string>()
  let seen = 0
  const midBurst = () => {
    for (const request of receiver.requests.slice(seen)) arrived.add(parse(request).messageId)
    seen = receiver.requests.length
    return seen >= alreadyReceived + KILL_AFTER && [...accepted.values()].some((ids) => ids.some((id) => !arrived.has(id)))
  }

  let sequence = 0
  const create = async () => {
    while (!killed && unexpectedCreations.length < 20) {
      const name = `w-${sequence++}`
      let response: Response
      creationsInFlight++
      try {
        response = await fetch(`${service.base}/v1/workspaces`, {
          method: 'POST',
          headers: { 'x-api-key': organizationKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        })
      } catch (error) {
        // After the kill a failed request is simply not acknowledged.
        if (!killed) unexpectedCreations.push(`${name}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error)}`)
        continue
      } finally {
        creationsInFlight--
      }
      const location = response.headers.get('location') ?? ''
      const id = /^\/v1\/workspaces\/([0-9a-f-]{36})$/.exec(location)?.[1]
      if (response.status === 201 && id) {
        created.push(id)
        await response.arrayBuffer().catch(() => {})
        continue
      }
      const body = await response.text().catch((error: unknown) => `(body unreadable: ${String(error)})`)
      if (!killed) unexpectedCreations.push(`${name}: ${response.status} location=${location} ${body}`)
    }
  }

  const watcher = (async () => {
    const midLoads = () => created.length >= ACKS_BEFORE_KILL && creationsInFlight > 0 && sendsInFlight > 0 && midBurst()
    const deadline = Date.now() + BURST_TIMEOUT_MS
    while (!midLoads() && Date.now() < deadline && running(service)) await sleep(5)
    if (!midLoads()) {
      const progress = `${receiver.requests.length - alreadyReceived} burst webhooks arrived, ${created.length} creations acknowledged`
      unexpectedSends.push(`no kill mid-burst within ${BURST_TIMEOUT_MS} ms (${progress}); output:\n${service.output()}`)
    }
    killed = true
    receivedAtKill = receiver.requests.length
    sendsInFlightAtKill = sendsInFlight
    creationsInFlightAtKill = creationsInFlight
    service.child.kill('SIGKILL')
  })()
  const creators = Array.from({ length: CREATION_LOOPS }, create)

  const send = async (sessionId: string) => {
    for (let i = 1; i <= MESSAGES && !killed; i++) {
      sendsInFlight++
      try {
        const reply = await call(service, botKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${i}` } })
        if (reply.status === 202 && typeof reply.body?.messageId === 'string') accepted.get(sessionId)!.push(reply.body.messageId)
        else if (!killed) unexpectedSends.push(`${sessionId} m${i}: ${reply.status} ${JSON.stringify(reply.body)}`)
      } catch (error) {
        // After the kill a failed request is simply not accepted.
        if (!killed) unexpectedSends.push(`${sessionId} m${i}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error)}`)
      } finally {
        sendsInFlight--
      }
    }
  }

  await within(Promise.all([watcher, ...creators, ...sessionIds.map(send)]), BURST_TIMEOUT_MS + 2 * REQUEST_TIMEOUT_MS, () => 'the loads did not end')
  return { accepted, created, unexpectedSends, unexpectedCreations, receivedAtKill, sendsInFlightAtKill, creationsInFlightAtKill }
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

interface Listed {
  ids: string[]
  totalElements: number[]
}

/** Every page of GET /v1/workspaces at size 100. */
async function listAllWorkspaces(service: Service, apiKey: string): Promise<Listed> {
  const ids: string[] = []
  const totalElements: number[] = []
  for (let page = 0; page < 100; page++) {
    const body = (await expect(service, apiKey, 200, 'GET', `/v1/workspaces?size=100&page=${page}`)) as { content: { id: string }[]; totalElements: number }
    ids.push(...body.content.map((item) => item.id))
    totalElements.push(body.totalElements)
    if (body.content.length < 100) return { ids, totalElements }
  }
  throw new Error('more than 100 pages of workspaces')
}

interface Stored {
  createdEvents: number
  /** workspaceId of every WorkspaceCreated event. */
  eventWorkspaceIds: string[]
  tableIds: string[]
  /** The workspaces projection's checkpoint and the position of the newest workspace event. */
  checkpoint: string | undefined
  head: string | undefined
}

async function readStore(target: DatabaseTarget): Promise<Stored> {
  const storage = await openStorage(target)
  try {
    const { rows: counted } = await sql<{ count: string | number }>`select count(*) as count from events where event_type = 'WorkspaceCreated'`.execute(storage.db)
    const { rows: events } = await sql<{ id: string }>`select data->>'workspaceId' as id from events where event_type = 'WorkspaceCreated'`.execute(storage.db)
    const { rows: table } = await sql<{ id: string }>`select id from workspaces`.execute(storage.db)
    const { rows: checkpoint } = await sql<{ at: string }>`
      select position_commit || '/' || position_prepare as at from projection_checkpoints where projection = 'workspaces'`.execute(storage.db)
    const { rows: head } = await sql<{ at: string }>`
      select transaction_id || '/' || global_position as at from events where starts_with(stream_id, 'workspace-')
      order by transaction_id desc, global_position desc limit 1`.execute(storage.db)
    return {
      createdEvents: Number(counted[0]?.count ?? -1),
      eventWorkspaceIds: events.map((row) => row.id),
      tableIds: table.map((row) => row.id),
      checkpoint: checkpoint[0]?.at,
      head: head[0]?.at,
    }
  } finally {
    await storage.close()
  }
}

const duplicates = (ids: string[]) => ids.filter((id, index) => ids.indexOf(id) !== index)
const sorted = (ids: Iterable<string>) => [...ids].sort()

async function killDuringAppendsAndDeliveries(t: Test, storage: StorageKind) {
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

  const loads = await loadUntilKilled(first, apiKey, admin, sessionIds, receiver, beforeBurst)
  t.same(loads.unexpectedSends, [], 'every send before the kill was accepted with 202 and a messageId')
  t.same(loads.unexpectedCreations, [], 'every creation before the kill was acknowledged with 201 and a Location')
  const killedExit = await within(first.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')
  t.equal(killedExit.signal, 'SIGKILL', 'the first process died of SIGKILL')

  t.ok(loads.created.length >= ACKS_BEFORE_KILL, `at least ${ACKS_BEFORE_KILL} creations were acknowledged (${loads.created.length})`)
  t.ok(loads.creationsInFlightAtKill > 0, `creations were in flight at the kill (${loads.creationsInFlightAtKill})`)
  t.same(duplicates(loads.created), [], 'no workspace id was acknowledged twice')
  const expected = new Set([...startMessage.values(), ...[...loads.accepted.values()].flat()])
  const acceptedCount = expected.size - SESSIONS
  const arrivedAtKill = new Set(receiver.requests.slice(0, loads.receivedAtKill).map((r) => parse(r).messageId))
  const missingAtKill = [...expected].filter((id) => !arrivedAtKill.has(id)).length
  t.ok(loads.sendsInFlightAtKill > 0, `sends were in flight at the kill (${loads.sendsInFlightAtKill})`)
  t.ok(loads.receivedAtKill - beforeBurst >= KILL_AFTER, `burst webhooks had arrived at the kill (${loads.receivedAtKill - beforeBurst})`)
  t.ok(missingAtKill > 0, `some accepted turns had not arrived at the kill (${missingAtKill} of ${expected.size})`)

  const second = await startService(t, setup.env)
  t.notMatch(second.stdout(), /X-Api-Key\s+wh_/, 'the restart did not bootstrap again')
  await until(second, 'GET /readyz to answer 200 (read models caught up)', READY_TIMEOUT_MS, () => answers(`${second.base}/readyz`, 200))
  const listed = await listAllWorkspaces(second, admin)
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

  // The appends: every acknowledged workspace, once, in the store, its read model and its list.
  const stored = await readStore(setup.target)
  const listedIds = new Set(listed.ids)
  t.same(
    loads.created.filter((id) => !listedIds.has(id)),
    [],
    'every acknowledged workspace is listed after the restart',
  )
  t.same(duplicates(listed.ids), [], 'no workspace is listed twice')
  t.ok(stored.createdEvents > loads.created.length, `the store holds the acknowledged WorkspaceCreated events and the bootstrap one (${stored.createdEvents})`)
  t.equal(listed.ids.length, stored.createdEvents, 'the list shows one workspace per WorkspaceCreated event')
  t.same(new Set(listed.totalElements), new Set([stored.createdEvents]), 'totalElements counts one per WorkspaceCreated event on every page')
  t.equal(stored.tableIds.length, stored.createdEvents, 'the workspaces table has one row per WorkspaceCreated event')
  t.same(duplicates(stored.eventWorkspaceIds), [], 'no workspace was created by two events')
  t.same(sorted(stored.tableIds), sorted(stored.eventWorkspaceIds), 'the table rows are exactly the workspaces of the events')
  t.same(sorted(listed.ids), sorted(stored.eventWorkspaceIds), 'the list shows exactly the workspaces of the events')
  t.equal(stored.checkpoint, stored.head, "the workspaces projection's checkpoint is at the newest workspace event")
  t.comment(
    `${storage.name}: workspaces acknowledged ${loads.created.length}, stored ${stored.createdEvents} (incl. bootstrap), ` +
      `committed but unacknowledged ${stored.createdEvents - 1 - loads.created.length}, in flight at kill ${loads.creationsInFlightAtKill}`,
  )
  if (!delivered) return

  // The deliveries: every turn at least once, a repeat the same webhook, each session's in order.
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
    const known = new Set([startMessage.get(sessionId)!, ...loads.accepted.get(sessionId)!])
    const order = firstArrivals(webhooks.filter((w) => w.sessionId === sessionId).map((w) => w.messageId)).filter((id) => known.has(id))
    t.same(order, [startMessage.get(sessionId), ...loads.accepted.get(sessionId)!], `session ${sessionId}: the first arrivals of its turns are in send order`)
  }

  const duplicated = webhooks.length - arrived.size
  const unacknowledged = [...arrived].filter((id) => !expected.has(id)).length
  t.comment(
    `${storage.name}: ${acceptedCount} messages accepted in ${SESSIONS} sessions (+${SESSIONS} start turns), ` +
      `${loads.receivedAtKill} webhooks received at the kill (${loads.receivedAtKill - beforeBurst} of the burst), ${loads.sendsInFlightAtKill} sends in flight at the kill; ` +
      `${webhooks.length} received in all for ${arrived.size} turns: ${duplicated} duplicates (same webhook-id), ` +
      `${unacknowledged} turns of sends the kill cut off before their 202`,
  )
}

t.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`)
})

for (const storage of storageKinds) {
  t.test(`SIGKILL during appends and webhook deliveries on ${storage.name}: no acknowledged event lost, each projected once; every turn arrives at least once, repeats share their webhook-id`, async (t) => {
    await killDuringAppendsAndDeliveries(t, storage)
  })
}
