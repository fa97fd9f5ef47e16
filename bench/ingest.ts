// Benchmark 1, ingest: POST /v1/sessions/{id}/message over many sessions at a fixed concurrency for
// a fixed time, against the service running as a child process on a fresh Postgres database, with
// autocannon in a process of its own. Beside it, in the same run and on the same database, the
// physical limit: pgbench inserting one event row per transaction (same table definition as
// `events`, same payload) at the same concurrency for the same time. Goal: ingest / limit ≥ 0.6.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Api, echoFlow, inParallel } from './lib/api.js'
import { createBenchDatabase, postgresSettings, sampleBackendStates, type BenchDatabase } from './lib/db.js'
import { benchDist } from './lib/env.js'
import { runPgbench, type PgbenchResult } from './lib/pgbench.js'
import { DEPLOYED_MAX_OLD_SPACE_MIB, bootstrap, cpuWindow, runWorker, sampleRss, sleep, startService, type CpuWindow } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import { stageTimes, summarizeProfile, type ProfileSummary } from './tools/cpuprofile.js'
import type { BareHttpInput, BareHttpOutput, BareHttpProgress } from './load/bare-http.js'
import type { HttpLoadInput, HttpLoadOutput } from './load/http-load.js'
import type { BenchmarkRun } from './run.js'

export interface IngestSettings {
  connections: number
  durationSeconds: number
  warmupSeconds: number
  sessions: number
  /** Profile the service with --cpu-prof (slows it down: the figures are then not the record). */
  cpuProfile: boolean
}

export const defaultIngestSettings: IngestSettings = { connections: 32, durationSeconds: 20, warmupSeconds: 5, sessions: 1000, cpuProfile: false }

const MiB = 2 ** 20

async function countEvents(db: BenchDatabase): Promise<Record<string, number>> {
  const { rows } = await db.query<{ event_type: string; n: string }>('select event_type, count(*) as n from events group by event_type')
  return Object.fromEntries(rows.map((r) => [r.event_type, Number(r.n)]))
}

/** The database's counters from pg_stat_database (flushed by backends about once a second). */
async function databaseCounters(db: BenchDatabase): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, string>>(
    `select xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, blks_hit, blks_read
     from pg_stat_database where datname = current_database()`,
  )
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]))
}

async function waitForTurns(db: BenchDatabase, atLeast: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const turns = (await countEvents(db)).TurnCompleted ?? 0
    if (turns >= atLeast || Date.now() > deadline) return turns
    await sleep(250)
  }
}

/** EXPLAIN ANALYZE of the statements one accepted message costs, on the populated database, rolled back. */
async function explainAppend(db: BenchDatabase): Promise<Record<string, { executionMs: number; plan: string; eventsInTable?: number }>> {
  const { rows } = await db.query<{ stream_id: string; revision: string }>(
    "select stream_id, revision from streams where stream_id like 'session-%' order by revision desc limit 1",
  )
  const stream = rows[0]
  if (!stream) return {}
  const { rows: sample } = await db.query<{ data: string; metadata: string }>("select data::text, metadata::text from events where event_type = 'MessageReceived' limit 1")
  const { rows: recent } = await db.query<{ transaction_id: string; global_position: string }>(
    'select transaction_id, global_position from events order by transaction_id desc, global_position desc offset 200 limit 1',
  )
  const { rows: idle } = await db.query<{ position_commit: string; position_prepare: string }>(
    "select position_commit, position_prepare from projection_checkpoints where projection = 'organizations'",
  )
  const { rows: total } = await db.query<{ n: string }>('select count(*) as n from events')
  const statements: Record<string, { sql: string; values: unknown[] }> = {
    readStream: {
      sql: `select global_position, transaction_id, event_id, stream_id, stream_revision, event_type, data, metadata, created_at
            from events where stream_id = $1 and stream_revision >= 0 order by stream_revision`,
      values: [stream.stream_id],
    },
    reserveRevision: {
      sql: 'update streams set revision = revision + 1::bigint where stream_id = $1 and revision = $2 returning revision',
      values: [stream.stream_id, stream.revision],
    },
    insertEvent: {
      sql: `insert into events (event_id, stream_id, stream_revision, event_type, data, metadata)
            values (gen_random_uuid(), $1, $2, 'MessageReceived', cast($3 as jsonb), cast($4 as jsonb))
            returning global_position, transaction_id`,
      values: [stream.stream_id, String(BigInt(stream.revision) + 1n), sample[0]?.data ?? '{}', sample[0]?.metadata ?? '{}'],
    },
    subscriptionPage: {
      sql: `select global_position, transaction_id, event_id, stream_id, stream_revision, event_type, data, metadata, created_at
            from events
            where (transaction_id, global_position) > ($1::bigint, $2::bigint)
              and transaction_id < (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint
              and (starts_with(stream_id, 'session-'))
            order by transaction_id, global_position limit 500`,
      values: [recent[0]?.transaction_id ?? '0', recent[0]?.global_position ?? '0'],
    },
    // The same page for a projection none of the new events are for (organizations): its checkpoint
    // stays at its last own event, so each wake-up scans every event appended since.
    idleProjectionPage: {
      sql: `select global_position, transaction_id, event_id, stream_id, stream_revision, event_type, data, metadata, created_at
            from events
            where (transaction_id, global_position) > ($1::bigint, $2::bigint)
              and transaction_id < (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint
              and (starts_with(stream_id, 'organization-'))
            order by transaction_id, global_position limit 500`,
      values: [idle[0]?.position_commit ?? '0', idle[0]?.position_prepare ?? '0'],
    },
  }
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  const plans: Record<string, { executionMs: number; plan: string; eventsInTable?: number }> = {}
  try {
    await client.query('begin')
    for (const [name, { sql, values }] of Object.entries(statements)) {
      // Twice: the first run (undone) pays for planning and a cold cache; the second is the steady state.
      await client.query('savepoint warm')
      await client.query(`explain (analyze, buffers) ${sql}`, values)
      await client.query('rollback to savepoint warm')
      const { rows: planRows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`, values)
      const plan = planRows.map((r) => r['QUERY PLAN']).join('\n')
      plans[name] = { executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1]), plan, ...(name === 'idleProjectionPage' ? { eventsInTable: Number(total[0]?.n) } : {}) }
    }
  } finally {
    await client.query('rollback').catch(() => {})
    await client.end()
  }
  return plans
}

/**
 * The same load against fastify alone (bench/load/bare-http.ts): a warm-up, then the measured run;
 * the server's own CPU beside the generator's.
 */
async function bareHttpCeiling(settings: IngestSettings, sessionIds: string[]) {
  let base: string | undefined
  const server = runWorker<BareHttpInput, BareHttpOutput>(
    join(benchDist, 'load', 'bare-http.js'),
    { maxSeconds: settings.warmupSeconds + settings.durationSeconds + 120 },
    (settings.warmupSeconds + settings.durationSeconds + 180) * 1000,
    [],
    (progress) => (base = (progress as BareHttpProgress).base),
  )
  while (base === undefined) await Promise.race([sleep(20), server])
  const load = (durationSeconds: number) =>
    runWorker<HttpLoadInput, HttpLoadOutput>(
      join(benchDist, 'load', 'http-load.js'),
      { base: base!, apiKey: 'bare', sessionIds, connections: settings.connections, durationSeconds },
      (durationSeconds + 60) * 1000,
    )
  await load(settings.warmupSeconds)
  const measured = await load(settings.durationSeconds)
  await fetch(`${base}/stop`, { method: 'POST' })
  const { cpuCores } = await server
  return { acceptedPerSecond: measured.accepted / measured.durationSeconds, latencyMs: measured.latencyMs, serverCores: cpuCores, loadCores: measured.cpuCores }
}

async function pgbenchLimit(db: BenchDatabase, settings: IngestSettings): Promise<{ warmup: PgbenchResult; measured: PgbenchResult; cpu: CpuWindow; script: string }> {
  await db.query('create table pgbench_events (like events including all)')
  await db.query('create sequence pgbench_revision')
  const { rows } = await db.query<{ data: string; metadata: string }>("select data::text, metadata::text from events where event_type = 'MessageReceived' limit 1")
  const sample = rows[0] ?? { data: '{"message":{"type":"text","text":{"body":"hello"}}}', metadata: '{}' }
  // Payloads go as bind parameters (-D variables in prepared mode), as the service sends them.
  const script = [
    `\\set s random(1, ${settings.sessions})`,
    "insert into pgbench_events (event_id, stream_id, stream_revision, event_type, data, metadata) values (gen_random_uuid(), 'session-' || :s, nextval('pgbench_revision'), 'MessageReceived', cast(:data as jsonb), cast(:metadata as jsonb));",
    '',
  ].join('\n')
  const base = { databaseUrl: db.url, script, clients: settings.connections, threads: 2, protocol: 'prepared' as const }
  const args = (durationSeconds: number) => ({ ...base, durationSeconds, variables: { data: sample.data, metadata: sample.metadata } })
  const warmup = await runPgbench(args(settings.warmupSeconds))
  await db.query('checkpoint')
  const cpu = cpuWindow()
  const measured = await runPgbench(args(settings.durationSeconds))
  return { warmup, measured, cpu: cpu.end(), script }
}

export async function ingest(settings: IngestSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('ingest')
  const profileDir = settings.cpuProfile ? mkdtempSync(join(tmpdir(), 'flowd-bench-cpuprofile-')) : undefined
  try {
    const setupDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
    const admin = await bootstrap(db.url, setupDir).finally(() => rmSync(setupDir, { recursive: true, force: true }))
    const service = await startService({
      databaseUrl: db.url,
      // The heap cap every deployed flowd process runs with (the image's NODE_OPTIONS).
      nodeArgs: [`--max-old-space-size=${DEPLOYED_MAX_OLD_SPACE_MIB}`, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    })
    const rss = sampleRss(service.pid, 250)
    rss.phase('setup')
    let serviceStopped = false
    try {
      const api = new Api(service.base, admin.apiKey)
      await api.call('POST', '/v1/variables', 201, { name: 'said', type: 'string' })
      const flow = await api.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Echo', definition: echoFlow })
      const setupStarted = Date.now()
      const sessionIds = await inParallel(settings.sessions, 8, async () => (await api.call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, 201)).sessionId)
      const startTurns = await waitForTurns(db, settings.sessions, 60_000)
      process.stdout.write(`  ${settings.sessions} sessions created in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s (${startTurns} start turns done)\n`)

      const load = (durationSeconds: number) =>
        runWorker<HttpLoadInput, HttpLoadOutput>(
          join(benchDist, 'load', 'http-load.js'),
          { base: service.base, apiKey: admin.apiKey, sessionIds, connections: settings.connections, durationSeconds },
          (durationSeconds + 60) * 1000,
        )
      process.stdout.write(`  warm-up: ${settings.warmupSeconds} s of load\n`)
      rss.phase('warmup')
      const warmup = await load(settings.warmupSeconds)
      // Let the engine finish the warm-up's turns so the measured run starts from a quiet service.
      const afterWarmup = await countEvents(db)
      await waitForTurns(db, (afterWarmup.MessageReceived ?? 0) + settings.sessions, 60_000)
      await db.query('checkpoint')
      const before = await countEvents(db)
      process.stdout.write(`  ingest: ${settings.connections} connections for ${settings.durationSeconds} s\n`)
      await sleep(1_500)
      const countersBefore = await databaseCounters(db)
      const cpu = cpuWindow(service.pid)
      const states = sampleBackendStates(db.url, 50)
      rss.phase('measured')
      const measured = await load(settings.durationSeconds)
      const ingestCpu = cpu.end()
      const backendStates = await states.stop()
      await sleep(1_500)
      const countersAfter = await databaseCounters(db)
      // Database work per accepted message: every statement outside a transaction block counts as one.
      const perMessage = Object.fromEntries(
        Object.keys(countersAfter).map((k) => [k, round((countersAfter[k]! - (countersBefore[k] ?? 0)) / Math.max(measured.accepted, 1), 1)]),
      )
      const after = await countEvents(db)
      const memory = rss.stop()
      const peakRss = memory.peakBytes
      const stored = (after.MessageReceived ?? 0) - (before.MessageReceived ?? 0)
      const turnsDuring = (after.TurnCompleted ?? 0) - (before.TurnCompleted ?? 0)
      const exit = await service.stop()
      // Warnings and errors the service logged (pino JSON lines; the last 20 kB of its output).
      const logged = new Map<string, number>()
      for (const line of service.output().split('\n')) {
        const m = /^\{.*"level":(\d+).*"msg":"([^"]*)"/.exec(line)
        if (m && Number(m[1]) >= 40) logged.set(`${m[1]} ${m[2]}`, (logged.get(`${m[1]} ${m[2]}`) ?? 0) + 1)
      }
      serviceStopped = true
      if (exit.code !== 0) notes.push(`the service exited with ${exit.code ?? exit.signal} on SIGTERM`)

      process.stdout.write('  EXPLAIN ANALYZE of the append statements\n')
      const plans = await explainAppend(db)
      let profile: ProfileSummary | undefined
      let cpuPerMessage: { messages: number; stagesUs: Record<string, number>; readModelsUs: Record<string, number> } | undefined
      if (profileDir) {
        const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))
        if (file) {
          profile = summarizeProfile(join(profileDir, file))
          process.stdout.write(`  CPU profile of the service: ${join(profileDir, file)}\n`)
          // Over the service's whole life: every message it took (warm-up included) and its turn.
          const messages = after.MessageReceived ?? 0
          const { stages, readModels } = stageTimes(join(profileDir, file))
          const perMessage = (us: Record<string, number>) => Object.fromEntries(Object.entries(us).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, round(v / messages, 1)]))
          cpuPerMessage = { messages, stagesUs: perMessage(stages), readModelsUs: perMessage(readModels) }
          process.stdout.write(`  CPU µs per accepted message, by stage: ${JSON.stringify(cpuPerMessage.stagesUs)}\n`)
        } else notes.push('no CPU profile was written')
      }

      process.stdout.write(`  limit: pgbench, ${settings.connections} clients for ${settings.durationSeconds} s (after ${settings.warmupSeconds} s warm-up)\n`)
      const limit = await pgbenchLimit(db, settings)

      process.stdout.write(`  the HTTP layer alone: fastify, no database, ${settings.connections} connections for ${settings.durationSeconds} s\n`)
      const bare = await bareHttpCeiling(settings, sessionIds)

      const acceptedPerSecond = measured.accepted / measured.durationSeconds
      const ratio = acceptedPerSecond / limit.measured.tps
      const answered = Object.values(measured.statusCodes).reduce((a, b) => a + b, 0)
      // Requests still in flight when the clock stops (at most one per connection) are stored but not counted.
      if (stored < measured.accepted || stored > measured.accepted + settings.connections) {
        notes.push(`${measured.accepted} messages answered 202 but ${stored} MessageReceived events were stored during the run`)
      }
      if (settings.cpuProfile) notes.push('the service ran under --cpu-prof: these figures are slower than an unprofiled run and are not the record')
      const figures = [
        figure('accepted_per_s', 'ingest: accepted messages/s', round(acceptedPerSecond), 'msg/s'),
        figure('p50_ms', 'ingest: latency p50', round(measured.latencyMs.p50, 2), 'ms'),
        figure('p99_ms', 'ingest: latency p99', round(measured.latencyMs.p99, 2), 'ms'),
        figure('limit_tps', 'limit: pgbench inserts/s', round(limit.measured.tps), 'tx/s'),
        figure('limit_p50_ms', 'limit: latency p50', round(limit.measured.latencyMs.p50, 2), 'ms'),
        figure('limit_p99_ms', 'limit: latency p99', round(limit.measured.latencyMs.p99, 2), 'ms'),
        figure('ratio', 'ingest / limit', round(ratio, 3), '', { op: '>=', value: 0.6 }),
        figure('bare_http_per_s', 'the HTTP layer alone (fastify, 202, no database): requests/s', round(bare.acceptedPerSecond), 'req/s'),
        figure('bare_http_ratio', 'the HTTP layer alone / limit (not the bottleneck when above the goal)', round(bare.acceptedPerSecond / limit.measured.tps, 3), ''),
        figure('peak_rss_mib', 'service peak RSS (setup + warm-up + ingest)', round((peakRss ?? Number.NaN) / MiB), 'MiB', { op: '<', value: 300 }),
        figure('non_202', 'answers other than 202, errors, timeouts', answered - measured.accepted + measured.errors, '', { op: '<', value: 1 }),
      ]
      return {
        settings: { ...settings, pgbench: limit.measured.command, pgbenchScript: limit.script, postgres: await postgresSettings() },
        figures,
        details: {
          ingest: measured,
          // Average cores busy during the measured phases (2 cores in all here): the service process,
          // the postgres processes, and everything on the machine (load generator and others included).
          cpu: { ingest: ingestCpu, limit: limit.cpu },
          // pg_stat_database deltas over the measured phase divided by the messages accepted in it.
          databaseWorkPerAcceptedMessage: perMessage,
          serviceLogLines: Object.fromEntries(logged),
          memory: {
            peakMiB: round((memory.peakBytes ?? Number.NaN) / MiB),
            maxSampledMiBByPhase: Object.fromEntries(Object.entries(memory.byPhase).map(([k, v]) => [k, round(v / MiB)])),
            sampledEveryMs: memory.everyMs,
            seriesMiB: memory.seriesMiB,
          },
          // Share (%) of the service's database connections, sampled every 50 ms, by what they were doing.
          backendStates,
          warmup,
          storedMessageReceived: stored,
          turnsCompletedDuringRun: turnsDuring,
          limit: limit.measured,
          limitWarmup: limit.warmup,
          bareHttp: bare,
          explain: plans,
          ...(profile ? { cpuProfile: profile } : {}),
          ...(cpuPerMessage ? { cpuPerMessage } : {}),
        },
      }
    } finally {
      rss.stop()
      if (!serviceStopped) await service.stop()
    }
  } finally {
    await db.drop()
    if (profileDir && !settings.cpuProfile) rmSync(profileDir, { recursive: true, force: true })
  }
}
