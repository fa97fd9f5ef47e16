// Benchmark 4, projection rebuild: a fresh database holding about 1,000,000 events (sessions with
// their messages and turns, cards with their updates and moves, across 100 workspaces; generated in
// SQL from real events, see lib/generate.ts), then `flowd projections rebuild` — every read model,
// as an operator runs it — as a child process. Goal: events in the log ÷ wall time ≥ 50,000/s.

import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Api } from './lib/api.js'
import { onCleanup } from './lib/cleanup.js'
import { createBenchDatabase, postgresSettings, sampleBackendStates, type BenchDatabase } from './lib/db.js'
import { cliPath } from './lib/env.js'
import { createTenants, generateEvents, recordTemplates } from './lib/generate.js'
import { DEPLOYED_MAX_OLD_SPACE_MIB, bootstrap, commandCpuSeconds, cpuBetween, cpuWindow, processCpuSeconds, procStatusBytes, sleep, startService } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import { summarizeProfile, type ProfileSummary } from './tools/cpuprofile.js'
import type { BenchmarkRun } from './run.js'

export interface RebuildSettings {
  /** Events in the log before the rebuild (about; the generator reports the exact count). */
  events: number
  workspaces: number
  /** Share of the events in session streams; the rest are card events. */
  sessionShare: number
  cpuProfile: boolean
}

export const defaultRebuildSettings: RebuildSettings = { events: 1_000_000, workspaces: 100, sessionShare: 0.8, cpuProfile: false }

const MiB = 2 ** 20

async function databaseCounters(db: BenchDatabase): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, string>>(
    `select xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, blks_hit, blks_read
     from pg_stat_database where datname = current_database()`,
  )
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]))
}

interface ProjectionTiming {
  projection: string
  events: number
  /** Its own replay, as the command reports it: projections run several at once, so these overlap. */
  seconds: number
  eventsPerSecond: number
  /** Seconds from the command's start to this projection's line. */
  doneAt: number
}

/** `flowd projections rebuild` as a child; each projection's time is the one its "rebuilt" line reports. */
async function runRebuild(databaseUrl: string, profileDir: string | undefined, db: BenchDatabase) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
  const { DATABASE_URL: _d, PORT: _p, DATA_DIR: _dd, NODE_OPTIONS: _n, ...rest } = process.env
  const started = performance.now()
  // With the heap cap the image gives every flowd process, as an operator's rebuild runs there.
  const nodeOptions = [`--max-old-space-size=${DEPLOYED_MAX_OLD_SPACE_MIB}`, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])]
  const child = spawn(process.execPath, [...nodeOptions, cliPath, 'projections', 'rebuild'], {
    env: { ...rest, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const kill = onCleanup(`flowd projections rebuild (${child.pid})`, () => {
    if (child.exitCode === null) child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })
  const cpu = cpuWindow(child.pid)
  const states = sampleBackendStates(db.url, 100)
  // Read while the process lives (its /proc entry goes with it): peak RSS and CPU seconds so far.
  // PostgreSQL's backends for the rebuild end with it, so they are sampled while they live too.
  let peakRss = 0
  let cpuSeconds = 0
  const postgresBefore = commandCpuSeconds('postgres')
  const postgresSeen = new Map<number, number>()
  const rss = setInterval(() => {
    peakRss = Math.max(peakRss, procStatusBytes(child.pid!, 'VmHWM') ?? 0)
    cpuSeconds = Math.max(cpuSeconds, processCpuSeconds(child.pid!))
    for (const [pid, seconds] of commandCpuSeconds('postgres')) postgresSeen.set(pid, Math.max(seconds, postgresSeen.get(pid) ?? 0))
  }, 250)
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)))
  const timings: ProjectionTiming[] = []
  let buffer = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    buffer += c
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const m = /^(\S+): rebuilt from (\d+) events in ([\d.]+) s/.exec(line)
      if (m) {
        const [events, seconds, doneAt] = [Number(m[2]), Number(m[3]), (performance.now() - started) / 1000]
        timings.push({ projection: m[1]!, events, seconds: round(seconds, 2), eventsPerSecond: round(events / Math.max(seconds, 0.001), 0), doneAt: round(doneAt, 2) })
        process.stdout.write(`    ${m[1]}: ${events} events in ${seconds.toFixed(1)} s, done at ${doneAt.toFixed(1)} s\n`)
      }
    }
  })
  const countersAtStart = await databaseCounters(db)
  const exit = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const seconds = (performance.now() - started) / 1000
  clearInterval(rss)
  const cpuUse = { ...cpu.end(), processCores: round(cpuSeconds / seconds, 2), postgresCores: round(cpuBetween(postgresBefore, postgresSeen) / seconds, 2) }
  const backendStates = await states.stop()
  await kill()
  if (exit !== 0) throw new Error(`flowd projections rebuild exited with ${exit}:\n${stderr}`)
  // pg_stat_database over the whole rebuild (the projections overlap), per event applied.
  const countersAtEnd = await databaseCounters(db)
  const applied = Math.max(timings.reduce((a, t) => a + t.events, 0), 1)
  const databasePerEvent = Object.fromEntries(Object.keys(countersAtEnd).map((k) => [k, round((countersAtEnd[k]! - (countersAtStart[k] ?? 0)) / applied, 2)]))
  return { seconds, timings, databasePerEvent, cpu: cpuUse, backendStates, peakRss }
}

/** Read models against what the log says they must hold. */
async function checkReadModels(db: BenchDatabase, tenants: number): Promise<{ checks: Record<string, { expected: number; actual: number }>; mismatches: string[] }> {
  const one = async (text: string) => Number((await db.query<{ n: string }>(text)).rows[0]!.n)
  const checks: Record<string, { expected: number; actual: number }> = {
    session_logs: { expected: await one("select count(*) as n from events where event_type = 'SessionStarted'"), actual: await one('select count(*) as n from session_logs') },
    'session_logs timeout': { expected: await one("select count(*) as n from events where event_type = 'SessionExpired'"), actual: await one("select count(*) as n from session_logs where status = 'timeout'") },
    'session_logs error': {
      expected: await one("select count(*) as n from events where event_type = 'TurnCompleted' and data #>> '{output,status}' = 'error'"),
      actual: await one("select count(*) as n from session_logs where status = 'error'"),
    },
    'session_logs completed': {
      expected: await one("select count(*) as n from events where event_type = 'TurnCompleted' and data #>> '{output,status}' = 'completed'"),
      actual: await one("select count(*) as n from session_logs where status = 'completed'"),
    },
    webhook_sessions: { expected: await one("select count(*) as n from events where event_type = 'SessionStarted'"), actual: await one('select count(*) as n from webhook_sessions') },
    kanban_cards: {
      expected: await one("select (select count(*) from events where event_type = 'CardCreated') - (select count(*) from events where event_type = 'CardDeleted') as n"),
      actual: await one('select count(*) as n from kanban_cards'),
    },
    'kanban_cards moved': {
      expected: await one("select count(distinct stream_id) as n from events where event_type = 'CardStageChanged'"),
      actual: await one('select count(*) as n from kanban_cards where moved_at <> created_at'),
    },
    kanban_pipelines: { expected: tenants, actual: await one('select count(*) as n from kanban_pipelines') },
    workspaces: { expected: tenants, actual: await one('select count(*) as n from workspaces') },
  }
  const mismatches = Object.entries(checks)
    .filter(([, c]) => c.expected !== c.actual)
    .map(([k, c]) => `${k}: expected ${c.expected}, found ${c.actual}`)
  return { checks, mismatches }
}

export async function rebuild(settings: RebuildSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('rebuild')
  const profileDir = settings.cpuProfile ? mkdtempSync(join(tmpdir(), 'flowd-bench-cpuprofile-')) : undefined
  try {
    const setupDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
    const admin = await bootstrap(db.url, setupDir).finally(() => rmSync(setupDir, { recursive: true, force: true }))
    const service = await startService({ databaseUrl: db.url, env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' } })
    let tenants
    let templates
    try {
      const api = new Api(service.base, admin.apiKey)
      const setupStarted = Date.now()
      tenants = await createTenants(api, settings.workspaces)
      templates = await recordTemplates(api, db, tenants[0]!)
      process.stdout.write(`  ${tenants.length} workspaces, keys, pipelines and the template streams made through the API in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s\n`)
      await sleep(500)
    } finally {
      await service.stop()
    }
    process.stdout.write(`  generating about ${settings.events} events in SQL\n`)
    const generated = await generateEvents(db, tenants, templates, settings.events, settings.sessionShare, (t) => process.stdout.write(`    ${t}\n`))
    process.stdout.write(`  ${generated.totalEvents} events (${generated.sessions} sessions, ${generated.cards} cards) in ${generated.seconds.toFixed(1)} s\n`)
    await db.query('checkpoint')
    // The generated log has never had read models: a first build makes every webhook delivery. An
    // operator rebuilds a deployment whose read models were built (live), which the outbox does
    // not make again; that second run is the measured one.
    process.stdout.write('  flowd projections rebuild: the first build of the read models\n')
    const firstBuild = await runRebuild(db.url, undefined, db)
    await db.query('checkpoint')
    process.stdout.write('  flowd projections rebuild (all read models, built before)\n')
    const run = await runRebuild(db.url, profileDir, db)
    const { checks, mismatches } = await checkReadModels(db, tenants.length)
    for (const m of mismatches) notes.push(`read model incomplete after the rebuild: ${m}`)
    let profile: ProfileSummary | undefined
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))
      if (file) profile = summarizeProfile(join(profileDir, file), 30)
      else notes.push('no CPU profile was written')
      notes.push('the rebuild ran under --cpu-prof: these figures are slower than an unprofiled run and are not the record')
    }
    const applied = run.timings.reduce((a, t) => a + t.events, 0)
    const perSecond = generated.totalEvents / run.seconds
    const byName = (name: string) => run.timings.find((t) => t.projection === name)
    const figures = [
      figure('events', 'events in the log', generated.totalEvents, 'events'),
      figure('seconds', 'rebuild of every read model: wall time', round(run.seconds, 1), 's'),
      figure('events_per_s', 'events in the log ÷ wall time', round(perSecond), 'events/s', { op: '>=', value: 50_000 }),
      figure('applied_per_s', 'events applied (summed over the projections) ÷ wall time', round(applied / run.seconds), 'events/s'),
      figure('first_build_per_s', `first build, before any (every delivery made): ${round(firstBuild.seconds, 1)} s`, round(generated.totalEvents / firstBuild.seconds), 'events/s'),
      ...['session-logs', 'kanban-cards', 'webhook-outbox']
        .map((name) => byName(name))
        .filter((t) => t !== undefined)
        .map((t) => figure(`${t.projection}_per_s`, `${t.projection}: ${t.events} events in ${t.seconds} s`, t.eventsPerSecond, 'events/s')),
      figure('rebuild_cores', 'cores used by the rebuild process', run.cpu.processCores ?? Number.NaN, 'cores'),
      figure('postgres_cores', 'cores used by PostgreSQL during the rebuild', run.cpu.postgresCores, 'cores'),
      figure('peak_rss_mib', 'peak RSS of the rebuild process', round(run.peakRss / MiB), 'MiB', { op: '<', value: 300 }),
      figure('mismatches', 'read-model counts not matching the log', mismatches.length, '', { op: '<', value: 1 }),
    ]
    return {
      settings: { ...settings, command: `node --max-old-space-size=${DEPLOYED_MAX_OLD_SPACE_MIB} dist/src/cli/main.js projections rebuild`, postgres: await postgresSettings() },
      figures,
      details: {
        generated,
        firstBuild: { seconds: round(firstBuild.seconds, 2), perProjection: firstBuild.timings, cpu: firstBuild.cpu, peakRss: firstBuild.peakRss },
        perProjection: run.timings,
        databasePerEvent: run.databasePerEvent,
        cpu: run.cpu,
        // Share (%) of the rebuild's database connections, sampled every 100 ms, by what they were doing.
        backendStates: run.backendStates,
        readModelChecks: checks,
        ...(profile ? { cpuProfile: profile } : {}),
      },
    }
  } finally {
    await db.drop()
    if (profileDir) rmSync(profileDir, { recursive: true, force: true })
  }
}
