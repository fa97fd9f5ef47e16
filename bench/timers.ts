// Benchmark 9, timers: what pending timers cost while they wait, and how late they fire when they
// come due. The service runs as a child process (every role, as deployed) on a fresh Postgres
// database, delivering its webhooks to an HTTPS receiver in this process. First its CPU time over an
// idle window with no timer; then 10,000 sessions of a flow that waits at a delay (created 32 at a
// time, so their timers come due as fast as they were set) and its CPU time over the same window
// with the 10,000 timers pending; then, as they come due, each timer's lateness: its TimerFired's
// `firedAt` and its webhook's arrival here, each less the `until` it was set for.

import { createServer } from 'node:https'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { Api, inParallel } from './lib/api.js'
import { makeLocalCertificate } from './lib/certificate.js'
import { createBenchDatabase, type BenchDatabase } from './lib/db.js'
import { DEPLOYED_MAX_OLD_SPACE_MIB, bootstrap, cpuWindow, processCpuSeconds, sleep, startService, type CpuWindow, type Service } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round, summarize, type LatencySummary } from './lib/stats.js'
import type { BenchmarkRun } from './run.js'

export interface TimersSettings {
  /** Sessions waiting at the delay, one timer each. */
  timers: number
  /** Sessions created at once. */
  connections: number
  /** The delay: long enough for the creation, the engine's first turns, the settling and the idle window before the first is due. */
  delaySeconds: number
  /** Each idle window's length, after `settleSeconds` without work. */
  idleSeconds: number
  settleSeconds: number
  /** After the last timer is due, how long every TimerFired and webhook is waited for. */
  drainSeconds: number
}

export const defaultTimersSettings: TimersSettings = { timers: 10_000, connections: 32, delaySeconds: 150, idleSeconds: 30, settleSeconds: 10, drainSeconds: 300 }

/** Waits `delaySeconds` at a delay, then says so and ends: one webhook a session, its timer's. */
const pauseFlow = (seconds: number) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'pause', type: 'delay', position: { x: 200, y: 0 }, data: { seconds } },
    { id: 'done', type: 'message', position: { x: 400, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Time is up' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'pause' },
    { id: 'b', source: 'pause', target: 'done' },
  ],
})

interface IdleWindow {
  seconds: number
  /** The service's CPU time over the window, per second of it. */
  serviceCpuMsPerS: number
  cpu: CpuWindow
}

/** The service's CPU time over `seconds` in which nothing is asked of it, after `settleSeconds`. */
async function idleWindow(service: Service, settings: TimersSettings): Promise<IdleWindow> {
  await sleep(settings.settleSeconds * 1000)
  const window = cpuWindow(service.pid)
  const cpu0 = processCpuSeconds(service.pid)
  const started = performance.now()
  await sleep(settings.idleSeconds * 1000)
  const seconds = (performance.now() - started) / 1000
  return { seconds: round(seconds, 1), serviceCpuMsPerS: round(((processCpuSeconds(service.pid) - cpu0) * 1000) / seconds, 1), cpu: window.end() }
}

const count = async (db: BenchDatabase, sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n)

export async function timers(settings: TimersSettings, notes: string[]): Promise<BenchmarkRun> {
  const certificate = makeLocalCertificate()
  /** Arrival (Date.now()) of each webhook, by its messageId: the first of each webhook-id. */
  const arrived = new Map<string, number>()
  const webhookIds = new Set<string>()
  let repeated = 0
  const receiver = createServer({ key: readFileSync(certificate.keyFile), cert: readFileSync(certificate.certFile) }, (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const at = Date.now()
      const webhookId = String(request.headers['webhook-id'] ?? '')
      if (webhookIds.has(webhookId)) repeated++
      else {
        webhookIds.add(webhookId)
        arrived.set(String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId?: string }).messageId), at)
      }
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`

  const db = await createBenchDatabase('timers')
  const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-timers-'))
  const admin = await bootstrap(db.url, dataDir)
  const service = await startService({
    databaseUrl: db.url,
    dataDir,
    env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: certificate.certFile },
    nodeArgs: [`--max-old-space-size=${DEPLOYED_MAX_OLD_SPACE_MIB}`],
  })
  try {
    const adminApi = new Api(service.base, admin.apiKey)
    const { apiKey } = await adminApi.call<{ apiKey: string }>('POST', '/v1/api-keys', 201, { name: 'timers', callbackUrl: receiverUrl })
    const api = new Api(service.base, apiKey)
    const flow = await api.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Pause', definition: pauseFlow(settings.delaySeconds) })

    process.stdout.write(`  idle, no timer (${settings.idleSeconds} s)\n`)
    const none = await idleWindow(service, settings)

    process.stdout.write(`  creating ${settings.timers} sessions waiting ${settings.delaySeconds} s\n`)
    const creating = performance.now()
    await inParallel(settings.timers, settings.connections, () => api.call('POST', `/v1/sessions/flows/${flow.id}/create`, 201))
    const createSeconds = (performance.now() - creating) / 1000
    // Every timer is in the engine's table once the turns that set them are read.
    while ((await count(db, 'select count(*) as n from session_timers')) < settings.timers) await sleep(200)
    const pendingAt = performance.now()

    process.stdout.write(`  idle, ${settings.timers} timers pending (${settings.idleSeconds} s)\n`)
    const pending = await idleWindow(service, settings)
    const due = (await db.query<{ first: Date; last: Date }>('select min(due_at) as first, max(due_at) as last from session_timers')).rows[0]!
    if (Date.now() >= due.first.getTime()) throw new Error(`the first timer came due during the idle window: raise delaySeconds (${settings.delaySeconds})`)

    process.stdout.write(`  waiting for them to come due (${round((due.last.getTime() - Date.now()) / 1000)} s) and fire\n`)
    const deadline = due.last.getTime() + settings.drainSeconds * 1000
    let fired = 0
    while (((fired = await count(db, "select count(*) as n from events where event_type = 'TimerFired'")) < settings.timers || arrived.size < settings.timers) && Date.now() < deadline) await sleep(500)
    const { rows } = await db.query<{ messageId: string; until: string; firedAt: string }>(
      `select data->>'messageId' as "messageId", data->>'until' as until, data->>'firedAt' as "firedAt" from events where event_type = 'TimerFired'`,
    )
    const firedLate = rows.map((row) => Date.parse(row.firedAt) - Date.parse(row.until))
    const webhookLate = rows.flatMap((row) => (arrived.has(row.messageId) ? [arrived.get(row.messageId)! - Date.parse(row.until)] : []))
    const missingWebhooks = rows.length - webhookLate.length
    const firedTwice = rows.length - new Set(rows.map((row) => row.messageId)).size
    if (fired < settings.timers) notes.push(`${settings.timers - fired} timers had not fired ${settings.drainSeconds} s after the last was due`)
    if (missingWebhooks > 0) notes.push(`${missingWebhooks} fired timers had no webhook ${settings.drainSeconds} s after the last was due`)
    if (repeated > 0) notes.push(`${repeated} webhooks arrived again with a webhook-id seen before`)
    const firing = summarize(firedLate)
    const delivery = summarize(webhookLate)
    const lastFired = Math.max(...rows.map((row) => Date.parse(row.firedAt)))
    const dueSpreadSeconds = (due.last.getTime() - due.first.getTime()) / 1000
    const firedPerSecond = rows.length / ((lastFired - due.first.getTime()) / 1000)
    const ms = (summary: LatencySummary) => Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, k === 'count' ? v : round(v, 1)]))
    return {
      settings: { ...settings },
      figures: [
        figure('idle_cpu_none_ms_per_s', 'service CPU idle, no timer', none.serviceCpuMsPerS, 'ms/s'),
        figure('idle_cpu_pending_ms_per_s', `service CPU idle, ${settings.timers.toLocaleString('en-US')} timers pending`, pending.serviceCpuMsPerS, 'ms/s'),
        figure('fired_late_p50_ms', 'due → TimerFired p50', round(firing.p50, 1), 'ms'),
        figure('fired_late_p99_ms', 'due → TimerFired p99', round(firing.p99, 1), 'ms'),
        figure('fired_late_max_ms', 'due → TimerFired max', round(firing.max, 1), 'ms'),
        figure('webhook_late_p50_ms', 'due → webhook p50', round(delivery.p50, 1), 'ms'),
        figure('webhook_late_p99_ms', 'due → webhook p99', round(delivery.p99, 1), 'ms'),
        figure('webhook_late_max_ms', 'due → webhook max', round(delivery.max, 1), 'ms'),
        figure('fired_per_s', 'timers fired a second, first due to last fired', round(firedPerSecond, 1), 'timers/s'),
        figure('unfired', 'timers not fired', settings.timers - fired, ''),
        figure('fired_twice', 'timers fired twice', firedTwice, ''),
        figure('webhooks_missing', 'fired timers without a webhook', missingWebhooks, ''),
      ],
      details: {
        idle: { none, pending },
        create: { seconds: round(createSeconds, 1), perSecond: round(settings.timers / createSeconds, 1), pendingAfterSeconds: round((pendingAt - creating) / 1000, 1) },
        due: { first: due.first.toISOString(), last: due.last.toISOString(), spreadSeconds: round(dueSpreadSeconds, 1) },
        firedLateMs: ms(firing),
        webhookLateMs: ms(delivery),
        webhooksRepeated: repeated,
        servicePeakRssMiB: round((service.peakRssBytes() ?? Number.NaN) / 2 ** 20, 0),
      },
    }
  } finally {
    await service.stop()
    await db.drop()
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver.close(resolve))
    await certificate.remove()
  }
}
