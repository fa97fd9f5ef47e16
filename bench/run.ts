// npm run bench [-- NAME… [OPTIONS]]
//
// Runs the benchmarks against DATABASE_URL's PostgreSQL server (default
// postgres://postgres@127.0.0.1:5432/test), each on a fresh database it drops afterwards, writes
// bench/results/<name>-<date>.json, prints each figure beside its goal, and refreshes the results
// table in docs/performance.md. See docs/performance.md.

import { parseArgs } from 'node:util'
import { cleanupAll, installSignalCleanup } from './lib/cleanup.js'
import { postgresVersion, strayBenchDatabases } from './lib/db.js'
import { loadAverage, machine, versions } from './lib/env.js'
import { printResult, writeResult, type BenchResult, type Figure } from './lib/results.js'
import { defaultEndToEndSettings, endToEnd } from './endtoend.js'
import { defaultEventstoreSettings, eventstore } from './eventstore.js'
import { calls, defaultCallsSettings } from './calls.js'
import { defaultFairnessSettings, fairness, type Scenario, type Store } from './fairness.js'
import { defaultIngestSettings, ingest } from './ingest.js'
import { defaultListsSettings, lists } from './lists.js'
import { defaultRebuildSettings, rebuild } from './rebuild.js'
import { defaultTimersSettings, timers } from './timers.js'
import { defaultReplaysSettings, replays } from './replays.js'
import { updatePerformanceDoc } from './tools/report.js'

/** What a benchmark hands back; the runner adds the machine, versions and dates. */
export interface BenchmarkRun {
  settings: Record<string, unknown>
  figures: Figure[]
  details: Record<string, unknown>
}

const HELP = `Usage: npm run bench [-- NAME... [OPTIONS]]

Benchmarks (all when no name is given):
  ingest       POST /v1/sessions/{id}/message at concurrency 32 vs pgbench single-row inserts (goal ratio >= 0.6)
  endtoend     messages at a fixed rate (500/s for 60 s), 202 -> webhook at a local HTTPS receiver
               (goal p99 < 50 ms, none missing; service peak RSS < 300 MiB)
  eventstore   appends through our Postgres adapter vs @event-driven-io/emmett-postgresql (goal ratio >= 1.5)
  rebuild      flowd projections rebuild of every read model over 1,000,000 generated events (goal >= 50,000 events/s)
  lists        GET /v1/sessions/logs and the card listing, each filter, first and deep pages, q, over
               1,000,000 session logs and 1,000,000 cards in 100 workspaces (goal p99 < 25 ms in every case)
  fairness     one organization's hanging receiver (300 sessions, their webhooks held) and burst (32 clients
               creating sessions for 15 s) against another's create -> first webhook, on Postgres and on the
               embedded database (goals: hanging < 3 s each; burst worst < 3 s Postgres, < 5 s embedded)
  calls        turns a second when each makes one httpRequest to a local HTTPS API (2000 sessions, one
               message each, 32 in flight), beside the same turns without the call (recorded, no goal)
  timers       the service's CPU time idle with 10,000 timers pending against none, then each timer's
               lateness as they come due: due -> TimerFired and due -> webhook (recorded, no goal)
  replays      sessions a second one replay plays against a draft (5000 sessions of version 1, half
               of them changed by the draft; goal >= 100 sessions/s)
  report       only regenerate the results table in docs/performance.md from bench/results

Options:
  --duration S     seconds of each measured phase (ingest 20, endtoend 60, eventstore 10 per round,
                   fairness 15 of burst, timers 30 of each idle window)
  --rate N         endtoend: messages per second, sent on schedule whatever the answers do (500); then
                   the rate is stepped up, 20 s a step, until 202 -> webhook p99 reaches 100 ms (--ceiling 0: not)
  --ceiling S      endtoend: seconds measured per step of the rate search (20; 0 skips it)
  --rounds N       eventstore: rounds of the adapters taking turns (3)
  --connections N  concurrency: ingest connections, pgbench clients, eventstore writers, calls messages,
                   timers session creations, replays requests recording the sessions (32);
                   endtoend: connections of the sender's pool (128)
                   lists: requests in flight at once (1); fairness: clients of the burst (32)
  --sessions N     ingest, endtoend: sessions the messages go round (1000); fairness: the hanging
                   receiver's sessions (300); calls: sessions, one turn each (2000); timers: sessions
                   waiting at a delay, one timer each (10000); replays: sessions recorded and replayed (5000)
  --delay S        timers: the delay's seconds, which must outlast creating the sessions and the idle
                   window (150)
  --streams N      endtoend: also hold N session streams open (GET /v1/sessions/{id}/stream, one a session) and
                   time each turn to its stream event (written as endtoend-streams)
  --cpu-prof       ingest, endtoend: run the service under --cpu-prof; eventstore: each adapter's process in
                   the first round; summarise the profiles (slower: written as <name>-profiled,
                   not the record)

  --store S        fairness: postgres, embedded or both (both)
  --scenario S     fairness: hanging, burst or both (both)

  --events N       rebuild: events in the log (1000000)
  --scale F        rebuild, lists: multiply the data (events; session logs and cards) by F, e.g. 0.05
                   for a quick trial (1)
  --requests N     lists: measured requests per case, after 20 warm-up requests (200)

Environment: DATABASE_URL (server to create flowd_bench_* databases on), PGBENCH (pgbench binary),
BENCH_RESULTS_DIR (write results there instead of bench/results, and leave docs/performance.md alone),
BENCH_KEEP_DATABASES=1 (keep the flowd_bench_* databases afterwards, to EXPLAIN or experiment on them).`

const BENCHMARKS = ['ingest', 'endtoend', 'eventstore', 'rebuild', 'lists', 'fairness', 'calls', 'timers', 'replays'] as const
type Name = (typeof BENCHMARKS)[number]

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      rate: { type: 'string' },
      connections: { type: 'string' },
      sessions: { type: 'string' },
      streams: { type: 'string' },
      ceiling: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      events: { type: 'string' },
      scale: { type: 'string' },
      requests: { type: 'string' },
      store: { type: 'string' },
      scenario: { type: 'string' },
      delay: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  if (positionals.includes('report')) {
    process.stdout.write(updatePerformanceDoc() ? 'docs/performance.md: results table regenerated\n' : 'docs/performance.md has no results markers\n')
    return 0
  }
  const unknown = positionals.filter((p) => !(BENCHMARKS as readonly string[]).includes(p))
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}\n\n${HELP}\n`)
    return 2
  }
  const names: Name[] = positionals.length ? (positionals as Name[]) : [...BENCHMARKS]
  const int = (v: string | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined
    const n = Number(v)
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a whole number ≥ 1`)
    return n
  }
  const duration = int(values.duration, 'duration')
  const connections = int(values.connections, 'connections')
  const scale = values.scale === undefined ? 1 : Number(values.scale)
  if (!(scale > 0)) throw new Error('--scale needs a number > 0')

  installSignalCleanup()
  const stray = await strayBenchDatabases()
  if (stray.length) process.stderr.write(`bench: databases left by an earlier run (drop them by hand): ${stray.join(', ')}\n`)
  const pgVersion = await postgresVersion()
  let failed = false
  for (const name of names) {
    const started = new Date()
    const info = machine()
    const notes: string[] = []
    process.stdout.write(`\n>> ${name}\n`)
    let outcome: BenchmarkRun
    let tools: string[]
    let benchmark: string = name
    try {
      if (name === 'ingest') {
        const settings = {
          ...defaultIngestSettings,
          ...(duration ? { durationSeconds: duration } : {}),
          ...(connections ? { connections } : {}),
          ...(values.sessions ? { sessions: int(values.sessions, 'sessions')! } : {}),
          cpuProfile: values['cpu-prof'] === true,
        }
        if (settings.cpuProfile) benchmark = 'ingest-profiled'
        tools = ['autocannon', 'pgbench']
        outcome = await ingest(settings, notes)
      } else if (name === 'endtoend') {
        const settings = {
          ...defaultEndToEndSettings,
          ...(duration ? { durationSeconds: duration } : {}),
          ...(connections ? { connections } : {}),
          ...(values.rate ? { rate: int(values.rate, 'rate')! } : {}),
          ...(values.sessions ? { sessions: int(values.sessions, 'sessions')! } : {}),
          ...(values.streams ? { streams: int(values.streams, 'streams')! } : {}),
          ...(values.ceiling !== undefined ? { ceilingStepSeconds: Number(values.ceiling) } : {}),
          cpuProfile: values['cpu-prof'] === true,
        }
        if (!Number.isInteger(settings.ceilingStepSeconds) || settings.ceilingStepSeconds < 0) throw new Error('--ceiling needs a whole number of seconds (0: no rate search)')
        // The rate search answers for the plain run; a profiled or streamed run is about something else.
        if (settings.streams > 0 || settings.cpuProfile) settings.ceilingStepSeconds = 0
        if (settings.streams > settings.sessions) throw new Error('--streams cannot exceed --sessions: one stream a session')
        if (settings.streams > 0) benchmark = 'endtoend-streams'
        if (settings.cpuProfile) benchmark = 'endtoend-profiled'
        tools = ['undici']
        outcome = await endToEnd(settings, notes)
      } else if (name === 'rebuild') {
        const settings = {
          ...defaultRebuildSettings,
          ...(values.events ? { events: int(values.events, 'events')! } : {}),
          cpuProfile: values['cpu-prof'] === true,
        }
        settings.events = Math.round(settings.events * scale)
        if (settings.cpuProfile) benchmark = 'rebuild-profiled'
        tools = []
        outcome = await rebuild(settings, notes)
      } else if (name === 'lists') {
        const settings = {
          ...defaultListsSettings,
          ...(connections ? { concurrency: connections } : {}),
          ...(values.requests ? { requests: int(values.requests, 'requests')! } : {}),
        }
        settings.sessionLogs = Math.round(settings.sessionLogs * scale)
        settings.cards = Math.round(settings.cards * scale)
        tools = ['undici']
        outcome = await lists(settings, notes)
      } else if (name === 'fairness') {
        const both = <T extends string>(value: string | undefined, options: readonly T[], option: string): T[] => {
          if (value === undefined || value === 'both') return [...options]
          if (!(options as readonly string[]).includes(value)) throw new Error(`--${option} needs one of ${options.join(', ')} or both`)
          return [value as T]
        }
        const settings = {
          ...defaultFairnessSettings,
          ...(duration ? { burstSeconds: duration } : {}),
          ...(connections ? { burstClients: connections } : {}),
          ...(values.sessions ? { hangingSessions: int(values.sessions, 'sessions')! } : {}),
          stores: both<Store>(values.store, ['postgres', 'embedded'], 'store'),
          scenarios: both<Scenario>(values.scenario, ['hanging', 'burst'], 'scenario'),
        }
        tools = []
        outcome = await fairness(settings, notes)
      } else if (name === 'calls') {
        const settings = {
          ...defaultCallsSettings,
          ...(connections ? { connections } : {}),
          ...(values.sessions ? { sessions: int(values.sessions, 'sessions')! } : {}),
        }
        tools = ['undici']
        outcome = await calls(settings, notes)
      } else if (name === 'timers') {
        const settings = {
          ...defaultTimersSettings,
          ...(duration ? { idleSeconds: duration } : {}),
          ...(connections ? { connections } : {}),
          ...(values.sessions ? { timers: int(values.sessions, 'sessions')! } : {}),
          ...(values.delay ? { delaySeconds: int(values.delay, 'delay')! } : {}),
        }
        tools = []
        outcome = await timers(settings, notes)
      } else if (name === 'replays') {
        const settings = {
          ...defaultReplaysSettings,
          ...(connections ? { connections } : {}),
          ...(values.sessions ? { sessions: int(values.sessions, 'sessions')! } : {}),
        }
        tools = []
        outcome = await replays(settings, notes)
      } else {
        const settings = {
          ...defaultEventstoreSettings,
          ...(duration ? { durationSeconds: duration } : {}),
          ...(connections ? { writers: connections, poolSize: connections } : {}),
          ...(values.rounds ? { rounds: int(values.rounds, 'rounds')! } : {}),
          cpuProfile: values['cpu-prof'] === true,
        }
        if (settings.cpuProfile) benchmark = 'eventstore-profiled'
        tools = ['@event-driven-io/emmett-postgresql', 'kysely', 'pg']
        outcome = await eventstore(settings, notes)
      }
    } catch (error) {
      failed = true
      process.stderr.write(`bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      await cleanupAll()
      continue
    }
    info.loadAverageAtEnd = loadAverage()
    const result: BenchResult = {
      benchmark,
      date: started.toISOString(),
      durationSeconds: Math.round((Date.now() - started.getTime()) / 1000),
      machine: info,
      versions: versions(pgVersion, tools),
      settings: outcome.settings,
      figures: outcome.figures,
      details: outcome.details,
      notes,
    }
    printResult(result)
    process.stdout.write(`  written to ${writeResult(result)}\n`)
  }
  // Trial runs into another folder leave the documented record alone.
  if (!process.env.BENCH_RESULTS_DIR && updatePerformanceDoc()) process.stdout.write('\ndocs/performance.md: results table regenerated\n')
  await cleanupAll()
  return failed ? 1 : 0
}

// Everything is written by now; a keep-alive socket or an idle pool timer of a library must not hold
// the process open afterwards.
main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    await cleanupAll()
    process.exit(1)
  },
)
