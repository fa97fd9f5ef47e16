import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { DEFAULT_ENGINE_PARTITIONS, loadConfig } from '../../src/config.js'
import { connectionBudget } from '../../src/connection-budget.js'
import { sessionStream, timerTriggerId } from '../../src/domain/session.js'
import { fairShare } from '../../src/engine/partitions.js'
import type { Role } from '../../src/roles.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath } from '../helpers/cli.js'
import { echoFlow, pauseFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { ROLE_START_TIMEOUT_MS, WEBHOOK_ENV, leasesHeld, leasesLogged, parseWebhook, projectionLeases, sessionEvents, sweeps } from '../helpers/role-processes.js'
import { call, expect } from '../helpers/service-api.js'
import { EXIT_TIMEOUT_MS, logEntries, postgresStorageOn, running, startRole, stopGracefully, until, within, type Service } from '../helpers/service-process.js'
import { localPortsTo, processOfLocalPort } from '../helpers/socket-owner.js'
import { startPrivatePostgres } from '../helpers/private-postgres.js'
import { postgresUrl, separatePool, takeServerAlone } from '../helpers/storage.js'
import { eventually, sleep } from '../helpers/wait.js'

// A deployment split by role under steady load: 2 api, 3 engine, 2 projector and 2 dispatcher
// processes against one fresh Postgres database, every process probed for readiness 10 times a
// second and the database's connections counted every 100 ms. The projectors share the read
// models, each lease held by one and the other standing by on it; the engines share the
// partitions, none held twice, and one of them sweeps. A process without the api role serves no
// API. Mid-run two of the engines holding partitions (the sweeping one among them), the projector
// holding most read-model leases and a dispatcher with deliveries in flight are SIGKILLed at once:
// the surviving engine takes every partition and the sweeper, then a new engine joins; the other
// projector takes every lease. Every acknowledged message gets exactly one turn and one answered webhook, in
// per-session order; no kill holds a session's webhook back more than 3 s; the connections stay
// within the sum of the processes' budgets (src/connection-budget.ts); the partitions end spread
// over the live engines. Beside it all, another workspace's callback accepts connections and never
// answers: it becomes failing and costs the load nothing. After it all, 200 sessions created in a
// burst wait a few seconds at a delay: each timer fires once, its turn runs once and its webhook
// arrives once.

const SESSIONS = 20
const MESSAGES_PER_SECOND = 30
const LOAD_MS = 12_000
/** The kills come once this share of the load's time has passed. */
const KILL_AT_SHARE = 0.4
/** The guarantee: no session waits more than this for a webhook because of a kill. */
const KILL_DELAY_LIMIT_MS = 3_000
const PROBE_EVERY_MS = 100
const SAMPLE_EVERY_MS = 100
const PROBE_TIMEOUT_MS = 10_000
/** The receiver answers each webhook this long after it arrived, so a dispatcher always has some in flight. */
const RECEIVER_ANSWER_DELAY_MS = 50
/**
 * Around the kills the receiver answers this late, so that the dispatcher chosen for a delivery in
 * flight still has it in flight when the SIGKILL comes (finding its sockets takes a while on a busy machine).
 */
const RECEIVER_HOLD_AT_KILL_MS = 1_000
const DRAIN_TIMEOUT_MS = 60_000
const TAKEOVER_TIMEOUT_MS = 30_000
/** Engines count each other and ask for free partitions every second; a killed one's session ends at once. */
const REBALANCE_TIMEOUT_MS = 60_000
const PARTITIONS = DEFAULT_ENGINE_PARTITIONS
/** Pools sized so that the whole deployment's budget fits this server's max_connections (100 by default). */
const POOL_ENV = { API_POOL_SIZE: '3', ENGINE_POOL_SIZE: '3', PROJECTOR_POOL_SIZE: '8', DISPATCHER_POOL_SIZE: '3' }
// The shortest claim lease: with the default 2 s a killed dispatcher's claims come out again 2 to
// 2.5 s after the kill, which leaves a loaded machine too little of the 3 s the deployment promises.
const FAILOVER_ENV = { WEBHOOK_LEASE_SECONDS: '1' }
const DEPLOYMENT: Record<Role, number> = { api: 2, engine: 3, projector: 2, dispatcher: 2 }
/** The path of the callback that never answers within the dispatchers' 10 s, and its sessions. */
const HANGING_PATH = '/hanging'
const HANGING_ANSWER_MS = 11_000
const HANGING_SESSIONS = 10
const PARTITIONS_LOGGED = 'engine partitions held'
/**
 * Enough that every pass of the sweep finds more due timers than it fires side by side (16: the
 * creates come 32 at a time, and each second of them brings dozens due), and that every partition
 * of both live engines runs timer turns: the paths a larger burst takes, each timer checked.
 */
const TIMER_SESSIONS = 200
/** Sessions created at once. */
const TIMER_CREATES_IN_FLIGHT = 32
/** The callback of the timers' sessions: their webhooks go to a destination of their own. */
const TIMERS_PATH = '/timers'
const TIMER_SECONDS = 3
/** Generous: on a loaded machine the timers fire seconds late. */
const TIMERS_TIMEOUT_MS = 120_000

interface Member {
  name: string
  role: Role
  service: Service
  /** `performance.now()` when the test SIGKILLed it. */
  killedAt?: number
}

interface Acknowledged {
  sessionId: string
  messageId: string
  sentAt: number
  /** `performance.now()` when its 202 (or the session's 201) arrived. */
  ackedAt: number
}

/** Counts the connections to `database` every SAMPLE_EVERY_MS, from a connection to another database of the server, until stopped. */
function countConnections(serverUrl: string, database: string) {
  const pool = separatePool({ connectionString: serverUrl, max: 1 })
  let most = 0
  let samples = 0
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await pool.query<{ count: number }>('select count(*)::int as count from pg_stat_activity where datname = $1', [database])
      most = Math.max(most, rows[0]!.count)
      samples++
      await sleep(SAMPLE_EVERY_MS)
    }
  })()
  let ended: Promise<void> | undefined
  return {
    async stop() {
      stopped = true
      ended ??= loop.finally(() => pool.end())
      await ended
      return { most, samples }
    },
  }
}

interface Probe {
  member: Member
  at: number
  status?: number
  error?: string
}

/** GET /readyz on every member not killed, every PROBE_EVERY_MS, without waiting for the previous answer. */
function probeReadiness(members: readonly Member[]) {
  const probes: Probe[] = []
  const inFlight = new Set<Promise<void>>()
  const timer = setInterval(() => {
    for (const member of members) {
      if (member.killedAt !== undefined) continue
      const probe = fetch(`${member.service.base}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
        .then(async (response) => {
          await response.arrayBuffer()
          probes.push({ member, at: performance.now(), status: response.status })
        })
        .catch((error: unknown) => {
          probes.push({ member, at: performance.now(), error: assertionMessage(error) })
        })
      inFlight.add(probe)
      void probe.finally(() => inFlight.delete(probe))
    }
  }, PROBE_EVERY_MS)
  return {
    async stop() {
      clearInterval(timer)
      await Promise.all(inFlight)
      return probes
    },
  }
}

/**
 * Sends a message every 1/MESSAGES_PER_SECOND s for LOAD_MS, alternating between the api
 * processes, each to the next session that is not waiting for the answer to its previous one, so
 * each session's messages have one order.
 */
async function sendSteadily(apis: readonly Service[], apiKey: string, sessionIds: readonly string[], acknowledged: Acknowledged[], midway: () => void, signal: AbortSignal) {
  const refused: number[] = []
  const waiting = new Set<string>()
  const sends: Promise<void>[] = []
  let next = 0
  let skipped = 0
  const started = performance.now()
  let pastMidway = false
  for (let n = 0; performance.now() - started < LOAD_MS && !signal.aborted; n++) {
    if (!pastMidway && performance.now() - started >= KILL_AT_SHARE * LOAD_MS) {
      pastMidway = true
      midway()
    }
    const sessionId = sessionIds.map((_, i) => sessionIds[(next + i) % sessionIds.length]!).find((id) => !waiting.has(id))
    next = (next + 1) % sessionIds.length
    if (sessionId === undefined) skipped++
    else {
      waiting.add(sessionId)
      const api = apis[n % apis.length]!
      const sentAt = performance.now()
      sends.push(
        call(api, apiKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${n}` } })
          .then((reply) => {
            if (reply.status === 202) acknowledged.push({ sessionId, messageId: reply.body.messageId as string, sentAt, ackedAt: performance.now() })
            else refused.push(reply.status)
          })
          .catch(() => {
            refused.push(0)
          })
          .finally(() => waiting.delete(sessionId)),
      )
    }
    await sleep(Math.max(0, started + ((n + 1) * 1000) / MESSAGES_PER_SECOND - performance.now()))
  }
  await Promise.all(sends)
  return { refused, skipped }
}

/** Creates `count` sessions of `flowId`, TIMER_CREATES_IN_FLIGHT at a time, alternating between the api processes. */
async function createSessions(apis: readonly Service[], apiKey: string, flowId: string, count: number): Promise<string[]> {
  const ids: string[] = []
  let next = 0
  const creator = async () => {
    for (let n = next++; n < count; n = next++) ids.push((await expect(apis[n % apis.length]!, apiKey, 201, 'POST', `/v1/sessions/flows/${flowId}/create`)).sessionId)
  }
  await Promise.all(Array.from({ length: TIMER_CREATES_IN_FLIGHT }, creator))
  return ids
}

const webhookId = (request: ReceivedRequest) => String(request.headers['webhook-id'])

/** The requests of the load's callback, not the hanging one's. */
const loadRequests = (receiver: HttpsReceiver) => receiver.requests.filter((r) => !r.path.startsWith(HANGING_PATH))

/** The receiver's answered webhooks of the load: the first of each webhook-id, in arrival order, and the others. */
function answeredWebhooks(receiver: HttpsReceiver) {
  const first = new Map<string, ReceivedRequest>()
  const repeats: ReceivedRequest[] = []
  for (const request of loadRequests(receiver).filter((r) => r.answered)) {
    if (first.has(webhookId(request))) repeats.push(request)
    else first.set(webhookId(request), request)
  }
  return { first, repeats }
}

interface PartitionsEntry {
  partitions?: number[]
}

/** Each live engine's partitions, from the last PARTITIONS_LOGGED line it printed. */
const partitionsHeld = (engines: readonly Member[]) =>
  new Map(
    engines
      .filter((engine) => engine.killedAt === undefined)
      .flatMap((engine) => {
        const last = logEntries<PartitionsEntry>(engine.service, PARTITIONS_LOGGED).at(-1)
        return last ? [[engine, last.partitions ?? []] as const] : []
      }),
  )

/** The engines doing engine work, all but one of those holding partitions that does not sweep: a survivor keeps going, and the sweeper moves. */
function engineVictims(engines: readonly Member[]): Member[] {
  const working = [...partitionsHeld(engines)].filter(([, held]) => held.length > 0).map(([engine]) => engine)
  const survivor = working.find((engine) => !sweeps(engine.service))
  return survivor ? working.filter((engine) => engine !== survivor) : []
}

/** Why `engines` do not hold every partition between them with at most `share` each, none twice; undefined when they do. */
function unevenSpread(engines: readonly Member[], share: number): string | undefined {
  const held = partitionsHeld(engines)
  const sets = engines.map((engine) => held.get(engine))
  const each = sets.flatMap((set) => set ?? [])
  const spread = sets.every((set) => set !== undefined && set.length <= share) && each.length === PARTITIONS && new Set(each).size === PARTITIONS
  return spread ? undefined : assertionMessage(sets)
}

/** Waits until `engines` hold every partition between them, at most `share` each, none twice. */
async function spreadOver(engines: readonly Member[], share: number, what: string): Promise<void> {
  let last: string | undefined
  await eventually(what, () => ((last = unevenSpread(engines, share)) === undefined ? true : undefined), REBALANCE_TIMEOUT_MS).catch((error: unknown) => {
    throw new Error(`${assertionMessage(error, { maxLength: 300 })}; partitions held last: ${last}`)
  })
}

/** The dispatcher that sent a webhook, arrived at `since` or later, that the receiver has not answered yet. */
function dispatcherWithDeliveryInFlight(dispatchers: readonly Member[], receiver: HttpsReceiver, since: number): Member | undefined {
  const pids = dispatchers.map((d) => d.service.child.pid!)
  for (const request of loadRequests(receiver).filter((r) => !r.answered && r.remotePort !== undefined && r.arrivedAt >= since)) {
    const pid = processOfLocalPort(request.remotePort!, pids)
    const dispatcher = dispatchers.find((d) => d.service.child.pid === pid)
    if (dispatcher) return dispatcher
  }
  return undefined
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

// Its processes' budgets together take most of a server's max_connections: a private cluster of
// its own, or, where this machine cannot start one, DATABASE_URL's server with no other file beside it.
const privateServer = await startPrivatePostgres(t)
const serverUrl = 'cluster' in privateServer ? privateServer.cluster.url : postgresUrl
if (!('cluster' in privateServer)) takeServerAlone()
const skip = serverUrl ? false : `neither a private Postgres cluster (${'skip' in privateServer ? privateServer.skip : ''}) nor DATABASE_URL: the deployment runs as processes sharing a Postgres database`

t.test('a deployment split by role under load, with kills and a joining engine, within its connection budget', { skip }, async (t: Test) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  receiver.delay(RECEIVER_ANSWER_DELAY_MS)
  const setup = await postgresStorageOn(serverUrl).prepare(t, { ...WEBHOOK_ENV, ...POOL_ENV, ...FAILOVER_ENV, WEBHOOK_CA_FILE: receiver.caFile })
  const admin = setup.apiKey!
  const config = loadConfig(setup.env)
  const database = new URL(config.databaseUrl!).pathname.slice(1)
  // Leases and partitions are read from the info lines of engines and projectors.
  const envOf = (role: Role) => (role === 'engine' || role === 'projector' ? { ...setup.env, LOG_LEVEL: 'info' } : setup.env)

  const members: Member[] = []
  const join = async (role: Role, name: string): Promise<Member> => {
    const member: Member = { name, role, service: await startRole(t, role, envOf(role), ROLE_START_TIMEOUT_MS) }
    members.push(member)
    return member
  }
  await Promise.all(Object.entries(DEPLOYMENT).flatMap(([role, count]) => Array.from({ length: count }, (_, i) => join(role as Role, `${role} ${i + 1}`))))
  const ofRole = (role: Role) => members.filter((m) => m.role === role)
  const apis = ofRole('api').map((m) => m.service)
  const [api] = apis

  // The projectors share the read models: each lease held by one, the other standing by on it.
  const projectors = ofRole('projector')
  const sharedOut = () =>
    projectionLeases.every((lease) => {
      const holders = projectors.filter((p) => leasesHeld(p.service).includes(lease))
      const others = projectors.filter((p) => !holders.includes(p))
      return holders.length === 1 && others.every((p) => leasesLogged(p.service, 'another process holds the lease; standing by').includes(lease))
    })
  await eventually('each read-model lease held by one projector, the other standing by on it', () => (sharedOut() ? true : undefined), ROLE_START_TIMEOUT_MS)
  t.pass(`the ${projectionLeases.length} read-model leases are each held by one projector, the other standing by on it`)

  const [someEngine] = ofRole('engine')
  const noApi = await fetch(`${someEngine!.service.base}/v1/workspaces`, { headers: { 'x-api-key': admin } })
  await noApi.arrayBuffer()
  t.equal(noApi.status, 404, 'a process without the api role serves no API')
  const ready = await fetch(`${someEngine!.service.base}/readyz`)
  await ready.arrayBuffer()
  t.equal(ready.status, 200, 'but answers /readyz: ready once the read models, applied elsewhere, are caught up')

  const engineShare = fairShare(PARTITIONS, DEPLOYMENT.engine)
  await spreadOver(ofRole('engine'), engineShare, `the ${DEPLOYMENT.engine} engines to share every partition`)
  t.pass(`${DEPLOYMENT.engine} engines hold the ${PARTITIONS} partitions between them, at most ${engineShare} each, none twice`)
  await eventually('an engine to take the sweeper lease', () => (ofRole('engine').some((e) => sweeps(e.service)) ? true : undefined), REBALANCE_TIMEOUT_MS)
  t.equal(ofRole('engine').filter((e) => sweeps(e.service)).length, 1, 'one of them sweeps')

  const connections = countConnections(serverUrl!, database)
  t.teardown(() => connections.stop())
  const readiness = probeReadiness(members)
  t.teardown(() => readiness.stop())

  const { apiKey } = await expect(api!, admin, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  await expect(api!, apiKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await expect(api!, apiKey, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })

  // Another workspace whose callback, on the same origin, hangs, with sessions waiting on it all along.
  receiver.delay(HANGING_ANSWER_MS, HANGING_PATH)
  await expect(api!, admin, 201, 'POST', '/v1/workspaces', { name: 'Hanging' })
  const workspaces = await expect(api!, admin, 200, 'GET', '/v1/workspaces?size=100')
  const hangingWorkspace = workspaces.content.find((w: { name: string }) => w.name === 'Hanging')
  const { apiKey: hangingKey } = await expect(api!, admin, 201, 'POST', '/v1/api-keys', { name: 'hangs', workspaceId: hangingWorkspace.id, callbackUrl: `${receiver.url}${HANGING_PATH}` })
  await expect(api!, hangingKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const hangingFlow = await expect(api!, hangingKey, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  for (let i = 0; i < HANGING_SESSIONS; i++) await expect(api!, hangingKey, 201, 'POST', `/v1/sessions/flows/${hangingFlow.id}/create`)

  const acknowledged: Acknowledged[] = []
  const sessionIds: string[] = await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const sentAt = performance.now()
      const { sessionId } = await expect(api!, apiKey, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)
      const ackedAt = performance.now()
      const started = (await sessionEvents(api!, apiKey, sessionId)).find((e) => e.type === 'SessionStarted')!
      acknowledged.push({ sessionId, messageId: started.data.messageId, sentAt, ackedAt })
      return sessionId as string
    }),
  )

  const stopLoad = new AbortController()
  t.teardown(() => stopLoad.abort())
  let reachedMidway!: () => void
  const midway = new Promise<void>((resolve) => (reachedMidway = resolve))
  const load = sendSteadily(apis, apiKey, sessionIds, acknowledged, reachedMidway, stopLoad.signal)

  // Mid-run: the engine work, the read models' leases and deliveries in flight lose their process at once.
  await midway
  const engines = await eventually('engines holding partitions', () => {
    const victims = engineVictims(ofRole('engine'))
    return victims.length > 0 ? victims : undefined
  })
  t.ok(engines.some((engine) => sweeps(engine.service)), 'the sweeping engine is among the engines killed')
  const projector = projectors.reduce((most, p) => (leasesHeld(p.service).length > leasesHeld(most.service).length ? p : most))
  t.ok(leasesHeld(projector.service).length > 0, `${projector.name} holds read-model leases when killed`)
  const takenByBoth = projectionLeases.filter((lease) => projectors.every((p) => leasesLogged(p.service, 'lease taken; active').includes(lease)))
  t.same(takenByBoth, [], 'no read-model lease was taken by both projectors while both lived: the one standing by applied nothing under it')
  receiver.delay(RECEIVER_HOLD_AT_KILL_MS)
  const holdFrom = performance.now()
  const dispatcher = await eventually('a dispatcher with a delivery in flight', () => dispatcherWithDeliveryInFlight(ofRole('dispatcher'), receiver, holdFrom))
  const victims = [...engines, projector, dispatcher]
  // Its connections to the receiver, read while it lives: which of the receiver's requests it sent.
  const killedDispatcherPorts = localPortsTo(dispatcher.service.child.pid!, receiver.port)
  const killedAt = performance.now()
  for (const victim of victims) {
    victim.killedAt = killedAt
    victim.service.child.kill('SIGKILL')
  }
  receiver.delay(RECEIVER_ANSWER_DELAY_MS)
  for (const victim of victims) await within(victim.service.exited, EXIT_TIMEOUT_MS, () => `${victim.name} did not exit after SIGKILL`)
  t.pass(`SIGKILLed ${victims.map((v) => v.name).join(', ')}`)
  const survivor = ofRole('engine').find((engine) => engine.killedAt === undefined)!
  await spreadOver([survivor], PARTITIONS, 'the surviving engine to hold every partition')
  t.pass(`${survivor.name} holds all ${PARTITIONS} partitions`)
  await eventually('the surviving engine to sweep', () => (sweeps(survivor.service) ? true : undefined), REBALANCE_TIMEOUT_MS)
  t.pass(`${survivor.name} took the sweeper over`)
  const joined = await join('engine', 'engine 4 (joined after the kills)')
  const joinedAt = performance.now()

  const { refused, skipped } = await load
  t.same(refused, [], 'every message sent was acknowledged (202) by the api processes')
  const answerTimes = acknowledged.map((a) => a.ackedAt - a.sentAt).sort((a, b) => a - b)
  t.comment(`message to 202: median ${Math.round(answerTimes[Math.floor(answerTimes.length / 2)]!)} ms, longest ${Math.round(answerTimes.at(-1)!)} ms`)
  t.comment(`${acknowledged.length} turns acknowledged (${SESSIONS} session starts and ${acknowledged.length - SESSIONS} messages); ${skipped} sends left out while every session waited for an answer`)

  // A webhook answered while its attempt was not yet recorded when its dispatcher died goes out again,
  // with the same webhook-id (at least once): a receiver keeps the first of each webhook-id.
  const everyTurnDelivered = () => {
    const delivered = new Set([...answeredWebhooks(receiver).first.values()].map((r) => parseWebhook(r).messageId))
    return acknowledged.every((a) => delivered.has(a.messageId))
  }
  await eventually('an answered webhook for every acknowledged turn', () => (everyTurnDelivered() ? true : undefined), DRAIN_TIMEOUT_MS)
  const { first: firstAnswered, repeats } = answeredWebhooks(receiver)
  const probes = await readiness.stop()
  const { most, samples } = await connections.stop()

  // Delivery: one turn and one webhook per acknowledged message, in per-session order.
  const expectedOf = (sessionId: string) => acknowledged.filter((a) => a.sessionId === sessionId).map((a) => a.messageId)
  const deliveredOf = (sessionId: string, first = firstAnswered) => [...first.values()].map(parseWebhook).filter((w) => w.sessionId === sessionId).map((w) => w.messageId)
  const sessionsOutOfOrder = async () => {
    const wrong: string[] = []
    for (const sessionId of sessionIds) {
      const turns = (await sessionEvents(api!, apiKey, sessionId)).filter((e) => e.type === 'TurnCompleted').map((e) => e.data.messageId)
      if (JSON.stringify(turns) !== JSON.stringify(expectedOf(sessionId))) wrong.push(`${sessionId}: turns`)
      if (JSON.stringify(deliveredOf(sessionId)) !== JSON.stringify(expectedOf(sessionId))) wrong.push(`${sessionId}: webhooks`)
    }
    return wrong
  }
  t.same(await sessionsOutOfOrder(), [], `each of the ${acknowledged.length} acknowledged turns: exactly one TurnCompleted and one webhook, in per-session order`)
  const sentByKilledDispatcher = (request: ReceivedRequest) => request.remotePort !== undefined && killedDispatcherPorts.has(request.remotePort)
  const firstSentByKilledDispatcher = (repeat: ReceivedRequest) => sentByKilledDispatcher(firstAnswered.get(webhookId(repeat))!)
  const cutOff = loadRequests(receiver).filter((r) => !r.answered)
  t.same(
    [...repeats.filter((r) => !firstSentByKilledDispatcher(r)), ...cutOff.filter((r) => !sentByKilledDispatcher(r))].map((r) => parseWebhook(r).messageId),
    [],
    `only the killed dispatcher's attempts went out twice: ${cutOff.length} cut off by the kill, ${repeats.length} answered but not yet recorded, each sent again with its webhook-id`,
  )
  t.ok(cutOff.length + repeats.length > 0, 'the killed dispatcher had deliveries in flight')

  const deliveredAt = new Map([...firstAnswered.values()].map((r) => [parseWebhook(r).messageId, r.arrivedAt]))
  // The kills hold no session back more than 3 s: each turn not yet delivered at the kill arrives within that of the kill, or of its 202 if later.
  const heldBack = acknowledged
    .map((a) => ({ ...a, arrivedAt: deliveredAt.get(a.messageId)! }))
    .filter((a) => a.arrivedAt > killedAt)
    .map((a) => ({ ...a, held: a.arrivedAt - Math.max(a.ackedAt, killedAt) }))
    .sort((a, b) => b.held - a.held)
  const [longest] = heldBack
  t.ok(longest && longest.held <= KILL_DELAY_LIMIT_MS, `no webhook held back more than ${KILL_DELAY_LIMIT_MS} ms by the kills (longest: ${Math.round(longest?.held ?? NaN)} ms over ${heldBack.length} turns delivered after them)`)
  const sinceKill = (at: number) => `${Math.round(at - killedAt)} ms`
  t.comment(`the longest held back: acknowledged at ${sinceKill(longest!.ackedAt)} after the kills, delivered at ${sinceKill(longest!.arrivedAt)}; the new engine answered at ${sinceKill(joinedAt)}`)
  const waits = acknowledged.map((a) => deliveredAt.get(a.messageId)! - a.ackedAt).sort((a, b) => a - b)
  t.comment(`202 to webhook: median ${Math.round(waits[Math.floor(waits.length / 2)]!)} ms, longest ${Math.round(waits.at(-1)!)} ms`)

  // Connections: the sum of every started process's budget, killed ones included (their sessions end as the kernel closes their sockets).
  const budget = members.reduce((sum, m) => sum + connectionBudget([m.role], config), 0)
  t.ok(samples > 0 && most <= budget, `at most ${most} connections to the database over ${samples} samples, within the deployment's budget of ${budget}`)
  const server = separatePool({ connectionString: serverUrl, max: 1 })
  t.teardown(() => server.end())
  const { rows } = await server.query<{ available: number }>("select current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int as available")
  t.ok(budget <= rows[0]!.available, `the budget fits the server: ${budget} of ${rows[0]!.available} connections`)
  const tooMany = members.filter((m) => m.service.output().includes('too many clients')).map((m) => m.name)
  t.same(tooMany, [], 'no process was refused a connection (too many clients)')

  // Readiness: every probe answered 200 or 503, except those of a process killed on their way.
  const unanswered = probes.filter((p) => p.error !== undefined && !(p.member.killedAt !== undefined && p.at >= p.member.killedAt))
  t.same(
    unanswered.map((p) => `${p.member.name}: ${p.error}`),
    [],
    `${probes.length} readiness probes: ${probes.filter((p) => p.status === 200).length} ready, ${probes.filter((p) => p.status === 503).length} not ready, ${probes.length - probes.filter((p) => p.status !== undefined).length} cut off by a kill`,
  )
  t.same([...new Set(probes.flatMap((p) => (p.status === undefined ? [] : [p.status])))].filter((s) => s !== 200 && s !== 503), [], 'every answer was 200 or 503')

  await t.test('the surviving projector: every read-model lease, and the read models applied after the kill', async (t) => {
    const remaining = projectors.find((p) => p.killedAt === undefined)!
    await until(remaining.service, 'the surviving projector to hold every projection lease', TAKEOVER_TIMEOUT_MS, async () => projectionLeases.every((lease) => leasesHeld(remaining.service).includes(lease)))
    t.pass(`${remaining.name} holds every projection lease, the killed one's taken over`)
    const later = await expect(api!, apiKey, 201, 'POST', '/v1/flows', { name: 'Written after the projector died' })
    const listed = async () => ((await expect(api!, apiKey, 200, 'GET', '/v1/flows?size=100')).content as { id: string }[]).some((f) => f.id === later.id)
    await eventually('the new flow in the list', async () => ((await listed()) ? true : undefined), TAKEOVER_TIMEOUT_MS)
    t.pass('a write after the kill becomes visible in a list: the surviving projector applies the read models')
  })

  await t.test('the hanging destination: failing, apart from the load', async (t) => {
    const failing = await eventually('the hanging destination to be failing', async () => {
      const reply = await call(api!, hangingKey, 'GET', '/v1/webhooks/destinations?state=failing')
      return reply.body.content?.length > 0 ? reply.body.content[0] : undefined
    })
    t.match(failing, { destination: receiver.url, state: 'failing', lastError: /^timeout/ })
    t.ok(receiver.requests.some((r) => r.path.startsWith(HANGING_PATH)), 'its attempts reached the receiver and hung there')
    t.same((await call(api!, apiKey, 'GET', '/v1/webhooks/destinations?state=failing')).body.content, [], 'the load’s destination, on the same origin, never failed')
  })

  await t.test('engine partitions: every partition held once, spread over the live engines', async (t) => {
    const live = ofRole('engine').filter((engine) => engine.killedAt === undefined)
    const all = new Set(ofRole('engine').flatMap((engine) => logEntries<PartitionsEntry>(engine.service, PARTITIONS_LOGGED).flatMap((entry) => entry.partitions ?? [])))
    const share = fairShare(all.size, live.length)
    const spread = () => {
      const held = [...partitionsHeld(live).values()]
      const each = held.flat().sort((a, b) => a - b)
      return each.length === all.size && new Set(each).size === all.size && held.every((partitions) => partitions.length <= share)
    }
    await eventually('the partitions to spread over the live engines', () => (spread() ? true : undefined), TAKEOVER_TIMEOUT_MS).catch(() => undefined)
    const held = partitionsHeld(live)
    t.ok(spread(), `${all.size} partitions over ${live.length} live engines, each holding at most ${share}: ${[...held].map(([engine, partitions]) => `${engine.name} ${partitions.length}`).join(', ')}`)
    t.notOk(sweeps(joined.service), `${joined.name} stands by for the sweeper lease ${survivor.name} holds`)
  })

  // After the load, so that the delays its webhooks had after the kills are the kills' alone.
  const timerWebhooks = () => receiver.requests.filter((r) => r.path.startsWith(TIMERS_PATH))
  let timerSessionIds: string[] = []
  await t.test(`${TIMER_SESSIONS} sessions created in a burst, each waiting ${TIMER_SECONDS} s at a delay`, async (t) => {
    const { apiKey: timersKey } = await expect(api!, admin, 201, 'POST', '/v1/api-keys', { name: 'timers', callbackUrl: `${receiver.url}${TIMERS_PATH}` })
    const pauseFlowId = (await expect(api!, apiKey, 201, 'POST', '/v1/flows', { name: 'Pause', definition: pauseFlow(TIMER_SECONDS) })).id
    const creating = performance.now()
    timerSessionIds = await createSessions(apis, timersKey, pauseFlowId, TIMER_SESSIONS)
    const created = performance.now()
    // One a session, its timer's: the first turn says nothing.
    await eventually('an answered webhook for every timer', () => (timerWebhooks().filter((r) => r.answered).length >= TIMER_SESSIONS ? true : undefined), TIMERS_TIMEOUT_MS)
    t.pass(`created in ${Math.round(created - creating)} ms; every timer's webhook answered ${Math.round(performance.now() - creating)} ms after the first create`)
  })

  for (const member of members.filter((m) => m.killedAt === undefined)) {
    t.same(await stopGracefully(member.service), { code: 0, signal: null }, `${member.name} stops cleanly on SIGTERM`)
  }
  await eventually('the receiver to have read everything the dispatchers sent', async () => ((await receiver.openConnections()) === 0 ? true : undefined), EXIT_TIMEOUT_MS)
  const atExit = answeredWebhooks(receiver)
  t.ok(sessionIds.every((sessionId) => JSON.stringify(deliveredOf(sessionId, atExit.first)) === JSON.stringify(expectedOf(sessionId))), 'still one webhook per turn once every process has exited')
  t.ok(atExit.repeats.every(firstSentByKilledDispatcher), "and none answered twice but the killed dispatcher's")
  t.ok(members.every((m) => !running(m.service)), 'every process has exited')

  await t.test('the timers: each fired once, its turn run once, its webhook sent once', async (t) => {
    const store = separatePool({ connectionString: config.databaseUrl!, max: 1 })
    t.teardown(() => store.end())
    const { rows } = await store.query<{ stream: string; type: string; messageId: string; until: string | null; firedAt: string | null }>(
      `select stream_id as stream, event_type as type, data->>'messageId' as "messageId", data->>'until' as until, data->>'firedAt' as "firedAt"
       from events where stream_id = any($1::text[]) and event_type in ('TimerFired', 'TurnCompleted') order by global_position`,
      [timerSessionIds.map(sessionStream)],
    )
    const webhooks = timerWebhooks().map(parseWebhook)
    const wrong: string[] = []
    const lateness: number[] = []
    for (const sessionId of timerSessionIds) {
      const events = rows.filter((row) => row.stream === sessionStream(sessionId))
      const fired = events.filter((row) => row.type === 'TimerFired')
      if (fired.length !== 1) {
        wrong.push(`${sessionId}: ${fired.length} TimerFired`)
        continue
      }
      const { messageId, until, firedAt } = fired[0]!
      lateness.push(Date.parse(firedAt!) - Date.parse(until!))
      if (messageId !== timerTriggerId(sessionId, 'pause', until!)) wrong.push(`${sessionId}: TimerFired ${messageId} is not the timer's`)
      if (firedAt! < until!) wrong.push(`${sessionId}: due ${until}, fired early at ${firedAt}`)
      const turns = events.filter((row) => row.type === 'TurnCompleted' && row.messageId === messageId).length
      if (turns !== 1) wrong.push(`${sessionId}: ${turns} turns for its timer`)
      const sent = webhooks.filter((w) => w.sessionId === sessionId).map((w) => w.messageId)
      if (JSON.stringify(sent) !== JSON.stringify([messageId])) wrong.push(`${sessionId}: webhooks ${sent.join()}`)
    }
    t.same(wrong, [], `${TIMER_SESSIONS} timers: each one TimerFired when due, one turn for it and one webhook, its timer's`)
    t.equal(webhooks.length, TIMER_SESSIONS, 'and no other webhook, once every process has exited')
    lateness.sort((a, b) => a - b)
    t.comment(`fired after due: median ${lateness[Math.floor(lateness.length / 2)]} ms, longest ${lateness.at(-1)} ms`)
  })
})
