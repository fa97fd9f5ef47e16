// The event-store load, in a process of its own: `writers` concurrent writers append one event per
// call to `streams` streams through one adapter, each writer owning the streams i ≡ w (mod writers)
// and going round them with the exact expected revision (no conflicts), for a fixed time. The
// streams are created (first event, untimed) before the clock starts.

import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import type { Database } from '../../src/store/database.js'
import { sampleBackendStates } from '../lib/db.js'
import { cpuWindow, processCpuSeconds, workerMain, type CpuWindow } from '../lib/processes.js'
import { Samples, summarize, type LatencySummary } from '../lib/stats.js'

export type AdapterName = 'flowd' | 'flowd-without-notify' | 'emmett'

export interface AppendWritersInput {
  adapter: AdapterName
  databaseUrl: string
  /** Stream names are `session-<runId>-<i>`. */
  runId: string
  streams: number
  writers: number
  poolSize: number
  durationSeconds: number
}

export interface AppendWritersOutput {
  adapter: AdapterName
  appends: number
  errors: number
  firstError?: string
  elapsedSeconds: number
  appendsPerSecond: number
  latencyMs: LatencySummary
  /** CPU this process spent in the timed phase, per append (user + system), in microseconds. */
  clientCpuUsPerAppend: number
  /**
   * CPU the PostgreSQL backends of this process's own connections spent in the timed phase, per
   * append, in microseconds: the server's work per append, unlike `cpu.postgresCores` not mixed with
   * other work on the server (10 ms clock ticks, so rough on short runs).
   */
  backendCpuUsPerAppend: number
  maxRssBytes: number
  /** Average cores busy in the timed phase: this process, the postgres processes, the whole machine. */
  cpu: CpuWindow
  /** Share (%) of sampled backend states in the timed phase: running, idle in transaction (waiting for the client), waiting on a lock, … */
  backendStates: Record<string, number>
}

/** Appends one event to stream i; `prepare` is the stream's first append. */
type Appender = { append(i: number): Promise<void>; close(): Promise<void> }

const workspaceId = randomUUID()
const actor = randomUUID()

const eventOf = (stream: string) => ({
  type: 'MessageReceived',
  data: {
    sessionId: stream,
    workspaceId,
    messageId: randomUUID(),
    message: { type: 'text', text: { body: 'hello from the benchmark' } },
    idempotencyKey: null,
    receivedAt: new Date().toISOString(),
  },
  metadata: { actor, correlationId: randomUUID(), workspaceId },
})

/** Names this process's connections, so that their backends can be found (see backendCpuUsPerAppend). */
const applicationName = (input: AppendWritersInput) => `bench-appender-${input.runId}`

function flowdAppender(input: AppendWritersInput, streamName: (i: number) => string, notify: boolean): Appender {
  const pool = new pg.Pool({ connectionString: input.databaseUrl, max: input.poolSize, application_name: applicationName(input) })
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  // As the service builds it: appends on the pool, and every append also announced by NOTIFY to other processes.
  const store = new PostgresEventStore({ db, pool, notifyOtherProcesses: notify })
  const revisions = new Array<bigint | undefined>(input.streams)
  return {
    async append(i) {
      const stream = streamName(i)
      const event = eventOf(stream)
      const { nextRevision } = await store.append(stream, [{ id: randomUUID(), ...event }], { expectedRevision: revisions[i] ?? 'no_stream' })
      revisions[i] = nextRevision
    },
    async close() {
      await store.close()
      await db.destroy()
      // Appends run on the pool itself: kysely, never used here, has not taken the pool over to end it.
      if (!pool.ended) await pool.end()
    },
  }
}

function emmettAppender(input: AppendWritersInput, streamName: (i: number) => string): Appender {
  const pool = new pg.Pool({ connectionString: input.databaseUrl, max: input.poolSize, application_name: applicationName(input) })
  pool.on('error', () => {})
  const store = getPostgreSQLEventStore(input.databaseUrl, { connectionOptions: { pool }, schema: { autoMigration: 'CreateOrUpdate' } })
  // Emmett's stream positions count from 1; 0n means "new stream".
  const versions = new Array<bigint>(input.streams).fill(0n)
  return {
    async append(i) {
      const stream = streamName(i)
      const { nextExpectedStreamVersion } = await store.appendToStream(stream, [eventOf(stream)], { expectedStreamVersion: versions[i]! })
      versions[i] = nextExpectedStreamVersion
    },
    async close() {
      await store.close()
      await pool.end().catch(() => {})
    },
  }
}

/** The server processes of this process's connections (PostgreSQL on this machine, as the benchmarks require). */
async function backendPids(input: AppendWritersInput): Promise<number[]> {
  const client = new pg.Client({ connectionString: input.databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [applicationName(input)])
    return rows.map((row) => row.pid)
  } finally {
    await client.end()
  }
}

workerMain<AppendWritersInput, AppendWritersOutput>(async (input) => {
  const streamName = (i: number) => `session-${input.runId}-${i}`
  const appender =
    input.adapter === 'emmett'
      ? emmettAppender(input, streamName)
      : flowdAppender(input, streamName, input.adapter === 'flowd')
  try {
    const owned = (w: number) => Array.from({ length: Math.ceil((input.streams - w) / input.writers) }, (_, k) => w + k * input.writers)
    // Untimed: create every stream (and, for Emmett, its schema on the first call).
    await appender.append(0)
    await Promise.all(Array.from({ length: input.writers }, async (_, w) => {
      for (const i of owned(w)) if (i !== 0) await appender.append(i)
    }))

    const backends = await backendPids(input)
    const backendCpuBefore = backends.map(processCpuSeconds)
    const latencies = new Samples()
    let appends = 0
    let errors = 0
    let firstError: string | undefined
    const cpuBefore = process.cpuUsage()
    const window = cpuWindow(process.pid)
    const waits = sampleBackendStates(input.databaseUrl, 50)
    const started = performance.now()
    const deadline = started + input.durationSeconds * 1000
    await Promise.all(
      Array.from({ length: input.writers }, async (_, w) => {
        const mine = owned(w)
        for (let k = 0; performance.now() < deadline && errors < 100; k++) {
          const i = mine[k % mine.length]!
          const t0 = performance.now()
          try {
            await appender.append(i)
            latencies.push(performance.now() - t0)
            appends++
          } catch (error) {
            errors++
            firstError ??= error instanceof Error ? error.message : String(error)
          }
        }
      }),
    )
    const elapsedSeconds = (performance.now() - started) / 1000
    const cpuCores = window.end()
    const backendStates = await waits.stop()
    const cpu = process.cpuUsage(cpuBefore)
    const backendCpuSeconds = backends.reduce((sum, pid, i) => sum + processCpuSeconds(pid) - backendCpuBefore[i]!, 0)
    return {
      adapter: input.adapter,
      appends,
      errors,
      ...(firstError ? { firstError } : {}),
      elapsedSeconds,
      appendsPerSecond: appends / elapsedSeconds,
      latencyMs: summarize(latencies.values()),
      clientCpuUsPerAppend: appends ? (cpu.user + cpu.system) / appends : Number.NaN,
      backendCpuUsPerAppend: appends ? (backendCpuSeconds * 1e6) / appends : Number.NaN,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      cpu: cpuCores,
      backendStates,
    }
  } finally {
    await appender.close()
  }
})
