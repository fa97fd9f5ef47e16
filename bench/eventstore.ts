// Benchmark 2, event store vs a peer: appends of one event per call to 1,000 streams by 32
// concurrent writers through our Postgres adapter, and the same through
// @event-driven-io/emmett-postgresql, on the same fresh database in the same run. The adapters take
// turns in rounds (A B, then B A, …) so that drift on a shared machine hits both alike, and each run
// is a process of its own. Goal: ours / theirs ≥ 1.5.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBenchDatabase, postgresSettings } from './lib/db.js'
import { benchDist, cliPath } from './lib/env.js'
import { run, runWorker } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import { summarizeProfile, type ProfileSummary } from './tools/cpuprofile.js'
import type { AdapterName, AppendWritersInput, AppendWritersOutput } from './load/append-writers.js'
import type { BenchmarkRun } from './run.js'

export interface EventstoreSettings {
  streams: number
  writers: number
  /** Connections of each adapter's pool: one per writer. */
  poolSize: number
  durationSeconds: number
  rounds: number
  /** Also run our adapter without NOTIFY, to show what NOTIFY costs (not part of the goal). */
  withoutNotify: boolean
  /** Profile each adapter's process with --cpu-prof (first round) and summarise where its CPU goes. */
  cpuProfile: boolean
}

export const defaultEventstoreSettings: EventstoreSettings = { streams: 1000, writers: 32, poolSize: 32, durationSeconds: 10, rounds: 3, withoutNotify: true, cpuProfile: false }

const MiB = 2 ** 20

export async function eventstore(settings: EventstoreSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('eventstore')
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
    const migrated = await run(process.execPath, [cliPath, 'migrate'], {
      env: { ...process.env, DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      timeoutMs: 60_000,
    }).finally(() => rmSync(dataDir, { recursive: true, force: true }))
    if (migrated.code !== 0) throw new Error(`flowd migrate failed:\n${migrated.stdout}\n${migrated.stderr}`)

    const adapters: AdapterName[] = ['flowd', 'emmett', ...(settings.withoutNotify ? (['flowd-without-notify'] as const) : [])]
    const runs: AppendWritersOutput[] = []
    const profiles: Record<string, ProfileSummary> = {}
    const profileDir = settings.cpuProfile ? mkdtempSync(join(tmpdir(), 'flowd-bench-cpuprofile-')) : undefined
    for (let r = 1; r <= settings.rounds; r++) {
      const order = r % 2 === 1 ? adapters : [...adapters].reverse()
      for (const adapter of order) {
        await db.query('checkpoint')
        process.stdout.write(`  round ${r}: ${adapter}, ${settings.writers} writers × ${settings.streams} streams for ${settings.durationSeconds} s\n`)
        const result = await runWorker<AppendWritersInput, AppendWritersOutput>(
          join(benchDist, 'load', 'append-writers.js'),
          {
            adapter,
            databaseUrl: db.url,
            runId: `r${r}${adapter.replace(/[^a-z]/g, '')}`,
            streams: settings.streams,
            writers: settings.writers,
            poolSize: settings.poolSize,
            durationSeconds: settings.durationSeconds,
          },
          (settings.durationSeconds + 120) * 1000,
          profileDir && r === 1 ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, adapter)}`] : [],
        )
        if (profileDir && r === 1) {
          const file = readdirSync(join(profileDir, adapter)).find((f) => f.endsWith('.cpuprofile'))
          if (file) {
            profiles[adapter] = summarizeProfile(join(profileDir, adapter, file), 15)
            process.stdout.write(`    CPU profile: ${join(profileDir, adapter, file)}\n`)
          }
        }
        process.stdout.write(
          `    ${round(result.appendsPerSecond)} appends/s, p50 ${round(result.latencyMs.p50, 2)} ms, p99 ${round(result.latencyMs.p99, 2)} ms; ` +
            `CPU per append: client ${round(result.clientCpuUsPerAppend)} µs, its backends ${round(result.backendCpuUsPerAppend)} µs; ` +
            `cores busy: client ${result.cpu.processCores}, postgres ${result.cpu.postgresCores}, machine ${result.cpu.machineBusyCores}` +
            `${result.errors ? `; ${result.errors} errors: ${result.firstError}` : ''}\n`,
        )
        runs.push(result)
      }
    }

    const total = (adapter: AdapterName) => {
      const mine = runs.filter((x) => x.adapter === adapter)
      const appends = mine.reduce((s, x) => s + x.appends, 0)
      const seconds = mine.reduce((s, x) => s + x.elapsedSeconds, 0)
      const p = (k: 'p50' | 'p99') => mine.map((x) => x.latencyMs[k]).sort((a, b) => a - b)[Math.floor((mine.length - 1) / 2)]!
      return {
        appends,
        errors: mine.reduce((s, x) => s + x.errors, 0),
        perSecond: appends / seconds,
        p50: p('p50'),
        p99: p('p99'),
        cpuUsPerAppend: mine.reduce((s, x) => s + x.clientCpuUsPerAppend * x.appends, 0) / appends,
        backendCpuUsPerAppend: mine.reduce((s, x) => s + x.backendCpuUsPerAppend * x.appends, 0) / appends,
        maxRssBytes: Math.max(...mine.map((x) => x.maxRssBytes)),
        /** Averages over the rounds of cores busy: the adapter's process, postgres, the machine. */
        cpu: {
          clientCores: round(mine.reduce((s, x) => s + (x.cpu.processCores ?? 0), 0) / mine.length, 2),
          postgresCores: round(mine.reduce((s, x) => s + x.cpu.postgresCores, 0) / mine.length, 2),
          machineBusyCores: round(mine.reduce((s, x) => s + x.cpu.machineBusyCores, 0) / mine.length, 2),
        },
      }
    }
    const ours = total('flowd')
    const theirs = total('emmett')
    const bare = settings.withoutNotify ? total('flowd-without-notify') : undefined

    // Every timed append must be in the tables: the prepared first events plus the counted ones.
    const { rows } = await db.query<{ ours: string; theirs: string }>(
      "select (select count(*) from events where stream_id like 'session-%') as ours, (select count(*) from emt_messages) as theirs",
    )
    const expectedOurs = ours.appends + (bare?.appends ?? 0) + settings.streams * settings.rounds * (bare ? 2 : 1)
    const expectedTheirs = theirs.appends + settings.streams * settings.rounds
    if (Number(rows[0]!.ours) !== expectedOurs || Number(rows[0]!.theirs) !== expectedTheirs) {
      notes.push(`row counts differ from the appends counted: events ${rows[0]!.ours} (expected ${expectedOurs}), emt_messages ${rows[0]!.theirs} (expected ${expectedTheirs})`)
    }
    if (settings.cpuProfile) notes.push('the first round ran under --cpu-prof: these figures are slower than an unprofiled run and are not the record')
    const errors = ours.errors + theirs.errors + (bare?.errors ?? 0)
    if (errors) notes.push(`${errors} appends failed; see details.runs`)

    const figures = [
      figure('ours_per_s', 'flowd adapter: appends/s', round(ours.perSecond), 'appends/s'),
      figure('ours_p50_ms', 'flowd adapter: latency p50', round(ours.p50, 2), 'ms'),
      figure('ours_p99_ms', 'flowd adapter: latency p99', round(ours.p99, 2), 'ms'),
      figure('theirs_per_s', 'emmett-postgresql: appends/s', round(theirs.perSecond), 'appends/s'),
      figure('theirs_p50_ms', 'emmett-postgresql: latency p50', round(theirs.p50, 2), 'ms'),
      figure('theirs_p99_ms', 'emmett-postgresql: latency p99', round(theirs.p99, 2), 'ms'),
      figure('ratio', 'ours / theirs', round(ours.perSecond / theirs.perSecond, 3), '', { op: '>=', value: 1.5 }),
      // Work per append, which unlike appends/s does not swing with the other work on the machine.
      figure('ours_server_us', 'flowd adapter: PostgreSQL CPU per append', round(ours.backendCpuUsPerAppend), 'µs'),
      figure('theirs_server_us', 'emmett-postgresql: PostgreSQL CPU per append', round(theirs.backendCpuUsPerAppend), 'µs'),
      figure('ours_client_us', 'flowd adapter: client CPU per append', round(ours.cpuUsPerAppend), 'µs'),
      figure('theirs_client_us', 'emmett-postgresql: client CPU per append', round(theirs.cpuUsPerAppend), 'µs'),
      ...(bare
        ? [
            figure('bare_per_s', 'flowd adapter without NOTIFY: appends/s', round(bare.perSecond), 'appends/s'),
            figure('bare_ratio', 'ours without NOTIFY / theirs', round(bare.perSecond / theirs.perSecond, 3), ''),
          ]
        : []),
      figure('ours_peak_rss_mib', 'peak RSS of the process running our adapter', round(ours.maxRssBytes / MiB), 'MiB', { op: '<', value: 300 }),
      figure('errors', 'failed appends', errors, '', { op: '<', value: 1 }),
    ]
    return {
      settings: { ...settings, postgres: await postgresSettings() },
      figures,
      details: { totals: { ours, theirs, ...(bare ? { oursWithoutNotify: bare } : {}) }, runs, ...(profileDir ? { cpuProfiles: profiles } : {}) },
    }
  } finally {
    await db.drop()
  }
}
