// Benchmark 2, end to end: messages sent at a fixed rate (open loop, 500/s) for a fixed time over
// many sessions, each timed from its 202 arriving at the load generator to its turn's webhook
// arriving at a local HTTPS receiver in the same process (bench/load/fixed-rate.ts), against the
// service running as a child process on a fresh Postgres database and delivering its webhooks
// through its real path (SSRF-checked agent, TLS, Standard Webhooks signatures). Goals: p99 < 50 ms,
// none missing; and the service's peak RSS < 300 MiB.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Api, echoFlow } from './lib/api.js'
import { makeLocalCertificate } from './lib/certificate.js'
import { createBenchDatabase, postgresSettings, sampleBackendStates, type BenchDatabase } from './lib/db.js'
import { benchDist } from './lib/env.js'
import { DEPLOYED_MAX_OLD_SPACE_MIB, bootstrap, cpuWindow, freePort, runWorker, sampleRss, sleep, startService, type CpuWindow } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round, summarize, type LatencySummary } from './lib/stats.js'
import { summarizeProfile, type ProfileSummary } from './tools/cpuprofile.js'
import type { FixedRateInput, FixedRateOutput, MessageTimes } from './load/fixed-rate.js'
import type { BenchmarkRun } from './run.js'

export interface EndToEndSettings {
  /** Messages per second, sent on schedule whatever the answers do. */
  rate: number
  durationSeconds: number
  warmupSeconds: number
  /** After the last 202 of a phase, how long its missing webhooks are waited for. */
  drainSeconds: number
  sessions: number
  /** Connections of the sender's pool. */
  connections: number
  /** Check the signature of every n-th webhook. */
  verifyEvery: number
  /** Profile the service with --cpu-prof (slows it down: the figures are then not the record). */
  cpuProfile: boolean
  /** Session streams held open meanwhile (one on each of the first this many sessions); 0: none. */
  streams: number
  /**
   * The service's `--max-old-space-size`, as it should be deployed (0: node's default, a quarter of
   * the machine's memory). Below 2 GiB V8 lets the heap grow to about 1.4× the live data between
   * full collections instead of 4×: at 500/s the peak RSS goes from about 330 to 190 MiB.
   */
  serviceMaxOldSpaceMiB: number
  /**
   * After the run, step the rate up (each step a fresh service, this many seconds measured) until
   * 202 → webhook p99 reaches CEILING_P99_MS or a webhook or 202 goes missing, or down until one
   * holds when the run's own rate does not; 0: no steps.
   */
  ceilingStepSeconds: number
}

export const defaultEndToEndSettings: EndToEndSettings = {
  rate: 500,
  durationSeconds: 60,
  warmupSeconds: 5,
  drainSeconds: 30,
  sessions: 1000,
  connections: 128,
  verifyEvery: 10,
  cpuProfile: false,
  streams: 0,
  serviceMaxOldSpaceMiB: DEPLOYED_MAX_OLD_SPACE_MIB,
  ceilingStepSeconds: 20,
}

/** The p99 of 202 → webhook under which a rate counts as sustained. */
export const CEILING_P99_MS = 100
/** Rates the search tries: up from the run's own while they hold, or down from it until one does. */
const CEILING_RATES = [50, 100, 200, 300, 400, 500, 650, 850, 1100, 1400, 1800, 2300, 3000, 4000, 5000]

const MiB = 2 ** 20

/**
 * Where the time of a message goes, from the wall-clock times the load process noted and those
 * the service stored: the command's `receivedAt` (MessageReceived), the turn's `completedAt`
 * (TurnCompleted), and the first delivery attempt's `attempted_at`. All clocks are this machine's.
 */
async function stages(db: BenchDatabase, messages: MessageTimes[]): Promise<{ matched: number; stagesMs: Record<string, LatencySummary> }> {
  const ids = messages.map((m) => m.messageId)
  const { rows } = await db.query<{ message_id: string; received_at: number; completed_at: number | null; attempted_at: number | null; attempts: number | null }>(
    `select r.data->>'messageId' as message_id,
            extract(epoch from (r.data->>'receivedAt')::timestamptz) * 1000 as received_at,
            extract(epoch from (t.data->>'completedAt')::timestamptz) * 1000 as completed_at,
            extract(epoch from a.attempted_at) * 1000 as attempted_at,
            d.attempt_count as attempts
       from events r
       left join events t on t.stream_id = r.stream_id and t.event_type = 'TurnCompleted' and t.data->>'messageId' = r.data->>'messageId'
       left join webhook_deliveries d on d.message_id = (r.data->>'messageId')::uuid
       left join webhook_attempts a on a.delivery_id = d.id and a.attempt = 1
      where r.event_type = 'MessageReceived' and r.data->>'messageId' = any($1::text[])`,
    [ids],
  )
  const byId = new Map(rows.map((r) => [r.message_id, r]))
  const series: Record<string, number[]> = {
    'due → command received (HTTP, queueing for a connection)': [],
    'command received → 202 at the client (decide, append, answer)': [],
    'command received → turn completed (engine picks it up, runs the turn)': [],
    'turn completed → first attempt (outbox projection, dispatcher claim)': [],
    'first attempt → webhook at the receiver (connect, TLS, POST)': [],
    'turn completed → turn event on the session stream (feed, SSE write)': [],
  }
  const push = (name: string, a: number | null | undefined, b: number | null | undefined) => {
    if (a !== null && a !== undefined && b !== null && b !== undefined && Number.isFinite(a) && Number.isFinite(b)) series[name]!.push(b - a)
  }
  let matched = 0
  for (const m of messages) {
    const row = byId.get(m.messageId)
    if (!row) continue
    matched++
    const received = Number(row.received_at)
    const completed = row.completed_at === null ? null : Number(row.completed_at)
    const attempted = row.attempted_at === null ? null : Number(row.attempted_at)
    const [a, b, c, d, e, f] = Object.keys(series)
    push(a!, m.scheduledAt, received)
    push(b!, received, m.acceptedAt)
    push(c!, received, completed)
    push(d!, completed, attempted)
    push(e!, attempted, m.webhookAt)
    push(f!, completed, m.streamAt)
  }
  return { matched, stagesMs: Object.fromEntries(Object.entries(series).map(([k, v]) => [k, roundSummary(summarize(v))])) }
}

const roundSummary = (s: LatencySummary): LatencySummary => ({
  count: s.count,
  p50: round(s.p50, 2),
  p90: round(s.p90, 2),
  p99: round(s.p99, 2),
  max: round(s.max, 2),
  mean: round(s.mean, 2),
})

/**
 * Samples, every `everyMs`, the oldest transaction of the database that holds a transaction id:
 * subscriptions read only events below `pg_snapshot_xmin` (the oldest such transaction still
 * open), so whatever it is holds back every subscriber's horizon for as long as it runs.
 */
function sampleHorizonHolders(databaseUrl: string, everyMs: number): { stop(): Promise<Record<string, unknown>> } {
  const ages: number[] = []
  const holders: Record<string, number> = {}
  let samples = 0
  const client = new pg.Client({ connectionString: databaseUrl })
  let running = true
  const loop = (async () => {
    await client.connect()
    while (running) {
      const { rows } = await client.query<{ age_ms: number; query: string }>(
        `select extract(epoch from clock_timestamp() - xact_start) * 1000 as age_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) as query
           from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_xid is not null
          order by xact_start limit 1`,
      )
      samples++
      const oldest = rows[0]
      if (oldest) {
        ages.push(Number(oldest.age_ms))
        holders[oldest.query] = (holders[oldest.query] ?? 0) + 1
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop() {
      running = false
      await loop.catch(() => {})
      await client.end().catch(() => {})
      return {
        samples,
        withAHolder: ages.length,
        // Age of the oldest xid-holding transaction when there was one (ms).
        oldestAgeMs: roundSummary(summarize(ages)),
        // What that transaction was running (the statement of the moment), by number of samples.
        oldestWasRunning: Object.fromEntries(Object.entries(holders).sort((a, b) => b[1] - a[1]).slice(0, 12)),
      }
    },
  }
}

/** Warnings and errors the service logged (pino JSON lines in the last 20 kB of its output), by level and message. */
function loggedProblems(output: string): Record<string, number> {
  const logged = new Map<string, number>()
  for (const line of output.split('\n')) {
    const m = /^\{.*"level":(\d+).*"msg":"([^"]*)"/.exec(line)
    if (m && Number(m[1]) >= 40) logged.set(`${m[1]} ${m[2]}`, (logged.get(`${m[1]} ${m[2]}`) ?? 0) + 1)
  }
  return Object.fromEntries(logged)
}

/**
 * The run at `settings.rate`, then the ceiling: the rate stepped up until the service no longer
 * sustains it (see {@link EndToEndSettings.ceilingStepSeconds}), the highest that held written as
 * a figure and every step in the details.
 */
export async function endToEnd(settings: EndToEndSettings, notes: string[]): Promise<BenchmarkRun> {
  const run = await endToEndAt(settings, notes)
  if (settings.ceilingStepSeconds <= 0) return run
  const value = (outcome: BenchmarkRun, key: string) => outcome.figures.find((f) => f.key === key)?.value ?? Number.NaN
  const held = (outcome: BenchmarkRun) => value(outcome, 'e2e_p99_ms') < CEILING_P99_MS && value(outcome, 'missing') === 0 && value(outcome, 'non_202') === 0
  const step = (rate: number, outcome: BenchmarkRun) => ({ rate, e2eP99Ms: value(outcome, 'e2e_p99_ms'), acceptedP99Ms: value(outcome, 'accepted_p99_ms'), missing: value(outcome, 'missing'), non202: value(outcome, 'non_202'), held: held(outcome) })
  const steps = [step(settings.rate, run)]
  const upward = steps[0]!.held
  const rates = upward ? CEILING_RATES.filter((r) => r > settings.rate) : CEILING_RATES.filter((r) => r < settings.rate).reverse()
  for (const rate of rates) {
    process.stdout.write(`  ceiling: ${rate} msg/s for ${settings.ceilingStepSeconds} s\n`)
    const outcome = await endToEndAt({ ...settings, rate, durationSeconds: settings.ceilingStepSeconds, warmupSeconds: 3, drainSeconds: 10 }, [])
    steps.push(step(rate, outcome))
    if (steps[steps.length - 1]!.held !== upward) break
  }
  const highest = steps.filter((s) => s.held).at(-1)?.rate ?? 0
  run.figures.push(figure('ceiling_rate', `highest rate sustained end to end (202 → webhook p99 < ${CEILING_P99_MS} ms, none missing), stepped up ${settings.ceilingStepSeconds} s a step`, highest, 'msg/s'))
  return { ...run, details: { ...run.details, ceilingSteps: steps } }
}

async function endToEndAt(settings: EndToEndSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('endtoend')
  const certificate = makeLocalCertificate()
  const profileDir = settings.cpuProfile ? mkdtempSync(join(tmpdir(), 'flowd-bench-cpuprofile-')) : undefined
  try {
    const setupDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
    const admin = await bootstrap(db.url, setupDir).finally(() => rmSync(setupDir, { recursive: true, force: true }))
    const receiverPort = await freePort()
    const service = await startService({
      databaseUrl: db.url,
      // The production delivery path, opened only for this receiver: loopback allowed, its certificate trusted.
      env: { WEBHOOK_CA_FILE: certificate.certFile, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' },
      nodeArgs: [
        ...(settings.serviceMaxOldSpaceMiB > 0 ? [`--max-old-space-size=${settings.serviceMaxOldSpaceMiB}`] : []),
        ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
        // Extra flags for a memory investigation (--heapsnapshot-signal=SIGUSR2, --require a sampler, …).
        ...(process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ],
    })
    const rss = sampleRss(service.pid, 250)
    rss.phase('setup')
    let serviceStopped = false
    try {
      const api = new Api(service.base, admin.apiKey)
      await api.call('POST', '/v1/variables', 201, { name: 'said', type: 'string' })
      // The flow's check of `said` reads the variables read model; should it lag the 201 of the
      // variable, try again (and say so) rather than fail the run.
      let flow: { id: string } | undefined
      for (let attempt = 1; !flow; attempt++) {
        try {
          flow = await api.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Echo', definition: echoFlow })
          if (attempt > 1) notes.push(`creating the flow took ${attempt} attempts: the variable it uses was not yet visible to the flow check`)
        } catch (error) {
          if (attempt >= 20 || !String(error).includes('no variable')) throw error
          await sleep(250)
        }
      }
      const key = await api.call<{ apiKey: string; signingSecret: string }>('POST', '/v1/api-keys', 201, {
        name: 'bench end to end',
        callbackUrl: `https://127.0.0.1:${receiverPort}/hooks`,
      })

      let cpu: { end(): CpuWindow } | undefined
      let states: ReturnType<typeof sampleBackendStates> | undefined
      let horizon: ReturnType<typeof sampleHorizonHolders> | undefined
      let horizonHolders: Record<string, unknown> | undefined
      let measuredCpu: CpuWindow | undefined
      let backendStates: Record<string, number> | undefined
      const onProgress = (p: unknown) => {
        const { phase, seconds } = p as { phase: string; seconds?: number }
        if (phase === 'sessions') process.stdout.write(`  ${settings.sessions} sessions created, their start webhooks received, in ${seconds?.toFixed(1)} s\n`)
        if (phase === 'streams') process.stdout.write(`  ${(p as { opened: number }).opened} session streams open\n`)
        if (phase === 'warmup') {
          rss.phase('warmup')
          process.stdout.write(`  warm-up: ${settings.warmupSeconds} s at ${settings.rate} msg/s\n`)
        }
        if (phase === 'measured') {
          process.stdout.write(`  measured: ${settings.durationSeconds} s at ${settings.rate} msg/s over ${settings.sessions} sessions\n`)
          rss.phase('measured')
          cpu = cpuWindow(service.pid)
          states = sampleBackendStates(db.url, 50)
          horizon = sampleHorizonHolders(db.url, 200)
        }
        if (phase === 'answered') {
          rss.phase('drain')
          measuredCpu = cpu?.end()
          void states?.stop().then((s) => (backendStates = s))
          void horizon?.stop().then((h) => (horizonHolders = h))
          process.stdout.write(`  all sends answered; waiting up to ${settings.drainSeconds} s for the last webhooks\n`)
        }
      }
      const input: FixedRateInput = {
        base: service.base,
        apiKey: key.apiKey,
        signingSecret: key.signingSecret,
        flowId: flow.id,
        sessions: settings.sessions,
        rate: settings.rate,
        warmupSeconds: settings.warmupSeconds,
        durationSeconds: settings.durationSeconds,
        drainSeconds: settings.drainSeconds,
        connections: settings.connections,
        receiver: { port: receiverPort, keyFile: certificate.keyFile, certFile: certificate.certFile },
        verifyEvery: settings.verifyEvery,
        streams: settings.streams,
      }
      const timeoutMs = (300 + settings.warmupSeconds + settings.durationSeconds + 2 * (settings.drainSeconds + 30)) * 1000
      const load = await runWorker<FixedRateInput, FixedRateOutput>(join(benchDist, 'load', 'fixed-rate.js'), input, timeoutMs, [], onProgress)
      const memory = rss.stop()
      backendStates ??= await states?.stop()
      horizonHolders ??= await horizon?.stop()

      const { rows: deliveries } = await db.query<{ status: string; n: string }>('select status, count(*) as n from webhook_deliveries group by status')
      const { rows: retried } = await db.query<{ n: string }>('select count(*) as n from webhook_deliveries where attempt_count > 1')
      const breakdown = await stages(db, load.measuredMessages)
      const exit = await service.stop()
      serviceStopped = true
      if (exit.code !== 0) notes.push(`the service exited with ${exit.code ?? exit.signal} on SIGTERM`)
      let profile: ProfileSummary | undefined
      if (profileDir) {
        const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))
        if (file) {
          profile = summarizeProfile(join(profileDir, file))
          process.stdout.write(`  CPU profile of the service: ${join(profileDir, file)}\n`)
        } else notes.push('no CPU profile was written')
      }

      const m = load.measured
      const non202 = m.scheduled - m.accepted
      if (load.receiver.signatureFailures) notes.push(`${load.receiver.signatureFailures} of ${load.receiver.signaturesChecked} webhook signatures checked did not verify`)
      if (m.sendRate < settings.rate * 0.98) notes.push(`the load generator kept a schedule of ${round(m.sendRate)} msg/s, short of the ${settings.rate} asked`)
      if (m.statusCodes.shed) notes.push(`${m.statusCodes.shed} of ${m.scheduled} sends were shed: no connection of ${settings.connections} freed within 10 s of their due time`)
      if (m.webhookBefore202) notes.push(`${m.webhookBefore202} webhooks arrived before the 202 of their message (counted with a negative latency)`)
      if (settings.cpuProfile) notes.push('the service ran under --cpu-prof: these figures are slower than an unprofiled run and are not the record')
      const figures = [
        figure('accepted_per_s', `202s per second (sent on schedule at ${settings.rate}/s)`, round(m.acceptedRate), 'msg/s'),
        figure('accepted_p50_ms', '202 latency p50 (from the moment the send was due)', round(m.acceptLatencyMs.p50, 2), 'ms'),
        figure('accepted_p99_ms', '202 latency p99', round(m.acceptLatencyMs.p99, 2), 'ms'),
        figure('e2e_p50_ms', '202 → webhook p50', round(m.acceptedToWebhookMs.p50, 2), 'ms'),
        figure('e2e_p99_ms', '202 → webhook p99', round(m.acceptedToWebhookMs.p99, 2), 'ms', { op: '<', value: 50 }),
        figure('e2e_max_ms', '202 → webhook max', round(m.acceptedToWebhookMs.max, 2), 'ms'),
        figure('missing', `webhooks missing ${settings.drainSeconds} s after the last 202`, m.missing, '', { op: '<', value: 1 }),
        figure('non_202', 'sends not answered 202 (shed unsent after 10 s, other status, error)', non202, '', { op: '<', value: 1 }),
        figure('peak_rss_mib', 'service peak RSS (setup + warm-up + end to end)', round((memory.peakBytes ?? Number.NaN) / MiB), 'MiB', { op: '<', value: 300 }),
      ]
      if (settings.streams > 0) {
        const turnToStream = breakdown.stagesMs['turn completed → turn event on the session stream (feed, SSE write)']!
        figures.push(
          figure('streams_open', `session streams open on the service at the end (of ${settings.streams})`, load.streams.openAtEnd, '', { op: '>=', value: settings.streams }),
          figure('stream_p50_ms', 'turn → its event on the session stream p50', turnToStream.p50, 'ms'),
          figure('stream_p99_ms', 'turn → its event on the session stream p99', turnToStream.p99, 'ms'),
          figure('stream_missing', `turns of streamed sessions missing on their stream ${settings.drainSeconds} s after the last 202`, m.streamMissing, '', { op: '<', value: 1 }),
        )
      }
      const { measuredMessages: _all, ...loadDetails } = load
      return {
        settings: { ...settings, postgres: await postgresSettings() },
        figures,
        details: {
          ...loadDetails,
          // Per stage, from the wall-clock times of the load process and those the service stored (ms).
          stages: breakdown,
          deliveriesByStatus: Object.fromEntries(deliveries.map((r) => [r.status, Number(r.n)])),
          deliveriesRetried: Number(retried[0]?.n ?? 0),
          // Average cores busy while the measured sends ran (2 cores in all here).
          cpu: measuredCpu,
          // Share (%) of the service's database connections, sampled every 50 ms, by what they were doing.
          backendStates,
          // The oldest transaction holding an xid, sampled every 200 ms: it holds back the horizon of every subscription.
          horizonHolders,
          memory: {
            peakMiB: round((memory.peakBytes ?? Number.NaN) / MiB),
            maxSampledMiBByPhase: Object.fromEntries(Object.entries(memory.byPhase).map(([k, v]) => [k, round(v / MiB)])),
            sampledEveryMs: memory.everyMs,
            seriesMiB: memory.seriesMiB,
          },
          serviceLogLines: loggedProblems(service.output()),
          ...(profile ? { cpuProfile: profile } : {}),
        },
      }
    } finally {
      rss.stop()
      if (!serviceStopped) await service.stop()
    }
  } finally {
    await db.drop()
    await certificate.remove()
    if (profileDir && !settings.cpuProfile) rmSync(profileDir, { recursive: true, force: true })
  }
}
