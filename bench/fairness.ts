// Benchmark 7, fairness between organizations: what one organization's dead receiver or burst costs
// another's first webhooks, on Postgres and on the embedded database. The service runs as a child
// process (a fresh one for each scenario and store) delivering through its real path to HTTPS
// receivers in this process, one per organization, on 127.0.0.1.
//
// - hanging: organization A's callback accepts connections and never answers; A creates sessions
//   (each greets, then waits on a question) and sends each a message, so every session has two
//   webhooks held. Then organization B creates sessions one every 250 ms, each timed from its create
//   request to its first webhook at B's receiver (goal: each < 3 s). Then A's receiver answers again:
//   every held delivery of A must arrive, in order per session, none twice.
// - burst: B creates one session every 300 ms for a while (quiet), then again while A creates
//   sessions with 32 clients at once (burst); B's create → first webhook, quiet next to burst (goal:
//   worst during the burst < 3 s on Postgres, < 5 s on the embedded database).

import { createServer, type Server } from 'node:https'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerResponse } from 'node:http'
import { Api, echoFlow, inParallel } from './lib/api.js'
import { makeLocalCertificate, type Certificate } from './lib/certificate.js'
import { createBenchDatabase, type BenchDatabase } from './lib/db.js'
import { bootstrap, freePort, sleep, startService, type Bootstrapped, type Service } from './lib/processes.js'
import { figure, type Figure } from './lib/results.js'
import { round, summarize, type LatencySummary } from './lib/stats.js'
import type { BenchmarkRun } from './run.js'

export type Store = 'postgres' | 'embedded'
export type Scenario = 'hanging' | 'burst'

export interface FairnessSettings {
  stores: Store[]
  scenarios: Scenario[]
  /** hanging: A's sessions, each with two webhooks held (its greeting and the answer to one message). */
  hangingSessions: number
  /** hanging: B's sessions, one every `otherEveryMs`. */
  otherSessions: number
  otherEveryMs: number
  /** burst: A's clients creating sessions at once, for `burstSeconds`; B creates one every `burstOtherEveryMs`. */
  burstClients: number
  burstSeconds: number
  burstOtherEveryMs: number
  /** After B's last create, how long its first webhooks are waited for. */
  waitSeconds: number
  /** hanging: after A's receiver answers again, how long its held deliveries are waited for. */
  drainSeconds: number
  /**
   * The service's WEBHOOK_RETRY_SCHEDULE: retries every 10 s keep the dead receiver's deliveries
   * coming back for the whole run (the default schedule waits 300 s after the second attempt), and
   * none goes dead before it answers again.
   */
  retrySchedule: string
}

export const defaultFairnessSettings: FairnessSettings = {
  stores: ['postgres', 'embedded'],
  scenarios: ['hanging', 'burst'],
  hangingSessions: 300,
  otherSessions: 8,
  otherEveryMs: 250,
  burstClients: 32,
  burstSeconds: 15,
  burstOtherEveryMs: 300,
  waitSeconds: 30,
  drainSeconds: 120,
  retrySchedule: [0, 5, ...Array.from({ length: 30 }, () => 10)].join(','),
}

const GOAL_MS: Record<Store, { hanging: number; burst: number }> = { postgres: { hanging: 3_000, burst: 3_000 }, embedded: { hanging: 3_000, burst: 5_000 } }

interface Webhook {
  sessionId: string
  messageId: string
  webhookId: string
}

/** An organization's HTTPS receiver: answers 200, or holds every request unanswered while hanging. */
class Receiver {
  hanging = false
  /** When each session's first webhook arrived (performance.now()). */
  readonly firstAt = new Map<string, number>()
  /** The webhooks answered 200, in the order answered. */
  readonly answered: Webhook[] = []
  requests = 0
  private held: ServerResponse[] = []
  private server?: Server
  port = 0

  async start(certificate: Certificate): Promise<void> {
    this.port = await freePort()
    this.server = createServer({ key: readFileSync(certificate.keyFile), cert: readFileSync(certificate.certFile) }, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        this.requests++
        if (this.hanging) {
          this.held.push(res)
          return
        }
        const arrived = performance.now()
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { sessionId?: string; messageId?: string }
        const sessionId = String(body.sessionId)
        if (!this.firstAt.has(sessionId)) this.firstAt.set(sessionId, arrived)
        this.answered.push({ sessionId, messageId: String(body.messageId), webhookId: String(req.headers['webhook-id'] ?? '') })
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve))
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}/hooks`
  }

  /** Answers from now on; the requests held so far lose their connection (the service tries them again). */
  answer(): void {
    this.hanging = false
    for (const res of this.held) res.socket?.destroy()
    this.held = []
  }

  async close(): Promise<void> {
    for (const res of this.held) res.socket?.destroy()
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}

interface Organization {
  api: Api
  flowId: string
}

/** Its variable, the echo flow (greets, then waits on a question) and a key whose webhooks go to `receiver`. */
async function organization(service: Service, admin: Bootstrapped, receiver: Receiver): Promise<Organization> {
  const adminApi = new Api(service.base, admin.apiKey)
  await adminApi.call('POST', '/v1/variables', 201, { name: 'said', type: 'string' })
  let flow: { id: string } | undefined
  for (let attempt = 1; !flow; attempt++) {
    try {
      flow = await adminApi.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Echo', definition: echoFlow })
    } catch (error) {
      // The flow check reads the variables' list, which may lag the variable's 201.
      if (attempt >= 20 || !String(error).includes('no variable')) throw error
      await sleep(250)
    }
  }
  const key = await adminApi.call<{ apiKey: string }>('POST', '/v1/api-keys', 201, { name: 'bench fairness', callbackUrl: receiver.url })
  return { api: new Api(service.base, key.apiKey), flowId: flow.id }
}

const createSession = async (org: Organization): Promise<string> => (await org.api.call<{ sessionId: string }>('POST', `/v1/sessions/flows/${org.flowId}/create`, 201, {})).sessionId

interface Sent {
  sent: number
  created: { sessionId: string; startedAt: number }[]
  errors: string[]
}

/** B's sessions, one every `everyMs` (each sent on schedule, whatever the earlier ones do) while `more` holds. */
async function createOnSchedule(org: Organization, everyMs: number, more: (sent: number) => boolean): Promise<Sent> {
  const sent: Promise<{ sessionId: string; startedAt: number } | { error: string }>[] = []
  const begin = performance.now()
  while (more(sent.length)) {
    await sleep(Math.max(0, begin + sent.length * everyMs - performance.now()))
    const startedAt = performance.now()
    sent.push(createSession(org).then((sessionId) => ({ sessionId, startedAt }), (error: unknown) => ({ error: String(error) })))
  }
  const results = await Promise.all(sent)
  return {
    sent: sent.length,
    created: results.filter((c): c is { sessionId: string; startedAt: number } => 'sessionId' in c),
    errors: results.flatMap((c) => ('error' in c ? [c.error] : [])),
  }
}

/**
 * Each created session timed from its create request to its first webhook, those missing waited for
 * up to `waitSeconds`; and where that time went, from what the service recorded (its clock is this
 * machine's): the session's start, its first turn, the first attempt of the delivery made of it.
 */
async function firstWebhooks(org: Organization, { sent, created, errors }: Sent, receiver: Receiver, waitSeconds: number) {
  const deadline = performance.now() + waitSeconds * 1000
  while (created.some((c) => !receiver.firstAt.has(c.sessionId)) && performance.now() < deadline) await sleep(50)
  const arrived = created.filter((c) => receiver.firstAt.has(c.sessionId))
  const times = arrived.map((c) => receiver.firstAt.get(c.sessionId)! - c.startedAt)
  const stages: Record<string, number[]> = {
    'create request → session started (HTTP, auth, append)': [],
    'session started → first turn completed (engine)': [],
    'turn completed → first attempt (outbox projection, dispatcher claim)': [],
    'first attempt → webhook at the receiver (connect, TLS, POST)': [],
  }
  const wall = (monotonic: number) => performance.timeOrigin + monotonic
  await inParallel(arrived.length, 4, async (i) => {
    const { sessionId, startedAt } = arrived[i]!
    const events = await org.api.call<{ content: { type: string; data: { startedAt?: string; completedAt?: string }; webhookDelivery: { id: string } | null }[] }>('GET', `/v1/sessions/${sessionId}/events`, 200)
    const start = events.content.find((e) => e.type === 'SessionStarted')
    const turn = events.content.find((e) => e.type === 'TurnCompleted')
    const made = events.content.find((e) => e.webhookDelivery)?.webhookDelivery
    if (!start?.data.startedAt || !turn?.data.completedAt || !made) return
    const delivery = await org.api.call<{ attempts: { attemptedAt: string }[] }>('GET', `/v1/webhooks/deliveries/${made.id}`, 200)
    const first = delivery.attempts[0]
    if (!first) return
    const points = [wall(startedAt), Date.parse(start.data.startedAt), Date.parse(turn.data.completedAt), Date.parse(first.attemptedAt), wall(receiver.firstAt.get(sessionId)!)]
    Object.values(stages).forEach((series, k) => series.push(points[k + 1]! - points[k]!))
  })
  return {
    sent,
    failed: errors.length,
    errors: errors.slice(0, 3),
    missing: created.length - times.length,
    times: roundSummary(summarize(times)),
    stagesMs: Object.fromEntries(Object.entries(stages).map(([name, series]) => [name, roundSummary(summarize(series))])),
  }
}

/** The worst create → first webhook; a webhook missing after the wait counts as the wait. */
const worst = (measured: { missing: number; failed: number; times: LatencySummary }, waitSeconds: number): number =>
  measured.missing + measured.failed > 0 ? waitSeconds * 1000 : measured.times.max

const roundSummary = (s: LatencySummary): LatencySummary => ({ count: s.count, p50: round(s.p50), p90: round(s.p90), p99: round(s.p99), max: round(s.max), mean: round(s.mean) })

/** A fresh service on `store` with two organizations (A, B), each with its own receiver. */
async function withService<T>(store: Store, retrySchedule: string, certificate: Certificate, work: (service: Service, a: Bootstrapped, b: Bootstrapped) => Promise<T>): Promise<T> {
  let db: BenchDatabase | undefined
  const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-fairness-'))
  try {
    let databaseUrl = ''
    if (store === 'postgres') {
      db = await createBenchDatabase('fairness')
      databaseUrl = db.url
    }
    // The embedded database lives in the service's DATA_DIR: both organizations are made there first.
    const a = await bootstrap(databaseUrl, dataDir, 'Bench A')
    const b = await bootstrap(databaseUrl, dataDir, 'Bench B')
    const service = await startService({
      databaseUrl,
      dataDir,
      env: { WEBHOOK_CA_FILE: certificate.certFile, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_RETRY_SCHEDULE: retrySchedule },
    })
    try {
      return await work(service, a, b)
    } finally {
      await service.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await db?.drop()
  }
}

async function hanging(store: Store, settings: FairnessSettings, certificate: Certificate, figures: Figure[]): Promise<Record<string, unknown>> {
  const receiverA = new Receiver()
  const receiverB = new Receiver()
  await receiverA.start(certificate)
  await receiverB.start(certificate)
  try {
    return await withService(store, settings.retrySchedule, certificate, async (service, adminA, adminB) => {
      const a = await organization(service, adminA, receiverA)
      const b = await organization(service, adminB, receiverB)
      receiverA.hanging = true
      const setupStarted = performance.now()
      const sessionsA = await inParallel(settings.hangingSessions, 8, () => createSession(a))
      const repliesA = await inParallel(sessionsA.length, 8, async (i) => (await a.api.call<{ messageId: string }>('POST', `/v1/sessions/${sessionsA[i]}/message`, 202, { type: 'text', text: { body: 'hello' } })).messageId)
      const setupSeconds = (performance.now() - setupStarted) / 1000
      process.stdout.write(`  ${store}: A's ${sessionsA.length} sessions created and answered once in ${setupSeconds.toFixed(1)} s, their webhooks held by A's receiver\n`)
      await sleep(2_000)
      const other = await firstWebhooks(b, await createOnSchedule(b, settings.otherEveryMs, (sent) => sent < settings.otherSessions), receiverB, settings.waitSeconds)
      process.stdout.write(`  ${store}: B's create → first webhook: ${other.times.count} arrived (worst ${other.times.max} ms), ${other.missing} missing after ${settings.waitSeconds} s\n`)

      // Its first attempts fail as they time out (10 s): from then on the API shows the destination failing.
      const failingFor = async () => (await a.api.call<{ content: { destination: string; heldDeliveries: number }[] }>('GET', '/v1/webhooks/destinations?state=failing', 200)).content
      let failingA = await failingFor()
      for (const giveUp = performance.now() + settings.waitSeconds * 1000; failingA.length === 0 && performance.now() < giveUp; failingA = await failingFor()) await sleep(250)
      const failingAfterSeconds = (performance.now() - setupStarted) / 1000
      process.stdout.write(`  ${store}: A's destination${failingA.length === 1 ? '' : 's'} failing ${failingAfterSeconds.toFixed(1)} s after its first create: ${failingA.map((d) => `${d.destination} holding ${d.heldDeliveries}`).join(', ') || 'none'}\n`)

      const heldRequests = receiverA.requests
      receiverA.answer()
      const expected = new Map(sessionsA.map((sessionId, i) => [sessionId, repliesA[i]!]))
      const released = performance.now()
      const delivered = () => new Set(receiverA.answered.map((w) => w.messageId)).size
      while (delivered() < 2 * expected.size && performance.now() - released < settings.drainSeconds * 1000) await sleep(100)
      const drainSeconds = (performance.now() - released) / 1000
      // In order per session: its greeting (the start's webhook) before the answer to its message.
      const bySession = new Map<string, string[]>()
      for (const w of receiverA.answered) bySession.set(w.sessionId, [...(bySession.get(w.sessionId) ?? []), w.messageId])
      let outOfOrder = 0
      for (const [sessionId, reply] of expected) {
        const seen = bySession.get(sessionId) ?? []
        const at = seen.indexOf(reply)
        if (at !== -1 && seen.slice(at + 1).some((m) => m !== reply)) outOfOrder++
      }
      const ids = receiverA.answered.map((w) => w.webhookId)
      const twice = ids.length - new Set(ids).size
      const missing = 2 * expected.size - delivered()
      process.stdout.write(`  ${store}: A answering again: ${delivered()} of ${2 * expected.size} held deliveries arrived in ${drainSeconds.toFixed(1)} s, ${twice} twice, ${outOfOrder} sessions out of order\n`)

      const k = `hanging_${store}`
      figures.push(
        figure(`${k}_b_worst_ms`, `${store}, A's receiver hanging: B's create → first webhook, worst of ${settings.otherSessions} (one missing counts as the ${settings.waitSeconds} s waited)`, worst(other, settings.waitSeconds), 'ms', { op: '<', value: GOAL_MS[store].hanging }),
        figure(`${k}_b_p50_ms`, `${store}, A's receiver hanging: B's create → first webhook p50`, other.times.p50, 'ms'),
        figure(`${k}_b_missing`, `${store}, A's receiver hanging: B's first webhooks missing ${settings.waitSeconds} s after the last create`, other.missing + other.failed, '', { op: '<', value: 1 }),
        figure(`${k}_a_failing`, `${store}, A's receiver hanging: its destinations shown failing by GET /v1/webhooks/destinations`, failingA.length, '', { op: '>=', value: 1 }),
        figure(`${k}_a_missing`, `${store}, A's receiver answering again: its held deliveries missing after ${settings.drainSeconds} s (of ${2 * expected.size})`, missing, '', { op: '<', value: 1 }),
        figure(`${k}_a_twice`, `${store}, A's receiver answering again: deliveries answered twice`, twice, '', { op: '<', value: 1 }),
        figure(`${k}_a_out_of_order`, `${store}, A's receiver answering again: sessions whose webhooks came out of order`, outOfOrder, '', { op: '<', value: 1 }),
      )
      return { setupSeconds: round(setupSeconds), other, failingA, failingAfterSeconds: round(failingAfterSeconds), heldRequests, released: { expected: 2 * expected.size, delivered: delivered(), twice, outOfOrder, seconds: round(drainSeconds) } }
    })
  } finally {
    await receiverA.close()
    await receiverB.close()
  }
}

async function burst(store: Store, settings: FairnessSettings, certificate: Certificate, figures: Figure[]): Promise<Record<string, unknown>> {
  const receiverA = new Receiver()
  const receiverB = new Receiver()
  await receiverA.start(certificate)
  await receiverB.start(certificate)
  try {
    return await withService(store, settings.retrySchedule, certificate, async (service, adminA, adminB) => {
      const a = await organization(service, adminA, receiverA)
      const b = await organization(service, adminB, receiverB)
      const seconds = settings.burstSeconds
      const quiet = await firstWebhooks(b, await createOnSchedule(b, settings.burstOtherEveryMs, (sent) => sent * settings.burstOtherEveryMs < seconds * 1000), receiverB, settings.waitSeconds)
      process.stdout.write(`  ${store}: quiet, B's create → first webhook: p50 ${quiet.times.p50} ms, worst ${quiet.times.max} ms\n`)

      let running = true
      let createdA = 0
      let failedA = 0
      const burstStarted = performance.now()
      const clients = Promise.all(
        Array.from({ length: settings.burstClients }, async () => {
          while (running) {
            await createSession(a).then(
              () => createdA++,
              () => failedA++,
            )
          }
        }),
      )
      const sent = await createOnSchedule(b, settings.burstOtherEveryMs, (n) => n * settings.burstOtherEveryMs < seconds * 1000)
      running = false
      await clients
      const burstSeconds = (performance.now() - burstStarted) / 1000
      const times = await firstWebhooks(b, sent, receiverB, settings.waitSeconds)
      process.stdout.write(`  ${store}: during A's burst (${createdA} sessions by ${settings.burstClients} clients in ${burstSeconds.toFixed(1)} s), B: p50 ${times.times.p50} ms, worst ${times.times.max} ms, ${times.missing} missing\n`)

      const k = `burst_${store}`
      figures.push(
        figure(`${k}_quiet_p50_ms`, `${store}, B alone: create → first webhook p50`, quiet.times.p50, 'ms'),
        figure(`${k}_quiet_worst_ms`, `${store}, B alone: create → first webhook worst`, quiet.times.max, 'ms'),
        figure(`${k}_p50_ms`, `${store}, during A's burst of ${settings.burstClients} clients: B's create → first webhook p50`, times.times.p50, 'ms'),
        figure(`${k}_p90_ms`, `${store}, during A's burst: B's create → first webhook p90`, times.times.p90, 'ms'),
        figure(`${k}_worst_ms`, `${store}, during A's burst: B's create → first webhook worst (one missing counts as the ${settings.waitSeconds} s waited)`, worst(times, settings.waitSeconds), 'ms', { op: '<', value: GOAL_MS[store].burst }),
        figure(`${k}_a_per_s`, `${store}, A's sessions created per second during its burst`, round(createdA / burstSeconds), '/s'),
      )
      return { quiet, during: times, burstA: { clients: settings.burstClients, created: createdA, failed: failedA, seconds: round(burstSeconds), webhooksArrived: receiverA.answered.length } }
    })
  } finally {
    await receiverA.close()
    await receiverB.close()
  }
}

export async function fairness(settings: FairnessSettings, notes: string[]): Promise<BenchmarkRun> {
  const certificate = makeLocalCertificate()
  const figures: Figure[] = []
  const details: Record<string, unknown> = {}
  try {
    for (const scenario of settings.scenarios) {
      for (const store of settings.stores) {
        process.stdout.write(`  ${scenario} on ${store}\n`)
        details[`${scenario}_${store}`] = scenario === 'hanging' ? await hanging(store, settings, certificate, figures) : await burst(store, settings, certificate, figures)
      }
    }
  } finally {
    await certificate.remove()
  }
  notes.push('the machine has 2 cores shared with other work: the figures move with its load (see machine.loadAverage*)')
  return { settings: { ...settings }, figures, details }
}
