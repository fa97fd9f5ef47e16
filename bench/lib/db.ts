import pg from 'pg'
import { adminDatabaseUrl } from './env.js'
import { onCleanup } from './cleanup.js'

export interface BenchDatabase {
  name: string
  url: string
  /** Runs one query on a short-lived connection to this database. */
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
  drop(): Promise<void>
}

const stamp = () => new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** A fresh database `flowd_bench_<benchmark>_<utc time>_<pid>` on DATABASE_URL's server, dropped by `drop` or at cleanup. */
export async function createBenchDatabase(benchmark: string): Promise<BenchDatabase> {
  const name = `flowd_bench_${benchmark.replace(/[^a-z0-9]/g, '_')}_${stamp()}_${process.pid}`
  await withClient(adminDatabaseUrl, (client) => client.query(`create database ${name}`))
  const url = new URL(adminDatabaseUrl)
  url.pathname = `/${name}`
  // BENCH_KEEP_DATABASES=1 leaves them for EXPLAIN and experiments afterwards (drop them by hand).
  const keep = Boolean(process.env.BENCH_KEEP_DATABASES)
  if (keep) process.stdout.write(`  database ${name} is kept (BENCH_KEEP_DATABASES)\n`)
  const drop = onCleanup(`database ${name}`, () =>
    keep
      ? Promise.resolve()
      : withClient(adminDatabaseUrl, async (client) => {
          await client.query(`drop database if exists ${name} with (force)`)
        }),
  )
  return {
    name,
    url: url.toString(),
    query: (text, values) => withClient(url.toString(), (client) => client.query(text, values)),
    drop,
  }
}

export async function postgresVersion(): Promise<string> {
  return withClient(adminDatabaseUrl, async (client) => (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version)
}

/** Settings of the server that shape write throughput, recorded with each result. */
export async function postgresSettings(): Promise<Record<string, string>> {
  const names = ['max_connections', 'shared_buffers', 'synchronous_commit', 'fsync', 'wal_level', 'commit_delay', 'max_wal_size', 'checkpoint_timeout']
  return withClient(adminDatabaseUrl, async (client) => {
    const { rows } = await client.query<{ name: string; setting: string; unit: string | null }>('select name, setting, unit from pg_settings where name = any($1)', [names])
    return Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting]))
  })
}

/** Other flowd_bench_* databases on the server (left by a killed run). */
export async function strayBenchDatabases(): Promise<string[]> {
  return withClient(adminDatabaseUrl, async (client) =>
    (await client.query<{ datname: string }>("select datname from pg_database where datname like 'flowd\\_bench\\_%'")).rows.map((r) => r.datname),
  )
}

/**
 * Samples what the database's other backends are doing every `everyMs` (pg_stat_activity): shows
 * whether appenders run, wait for the client, or wait on a lock.
 */
export function sampleBackendStates(databaseUrl: string, everyMs: number): { stop(): Promise<Record<string, number>> } {
  const counts: Record<string, number> = {}
  const client = new pg.Client({ connectionString: databaseUrl })
  let running = true
  const loop = (async () => {
    await client.connect()
    while (running) {
      const { rows } = await client.query<{ what: string }>(
        `select case when state = 'active' then coalesce(wait_event_type || ': ' || wait_event, 'running (on CPU)') else state || coalesce(' (' || wait_event || ')', '') end as what
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      )
      for (const { what } of rows) counts[what] = (counts[what] ?? 0) + 1
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop() {
      running = false
      await loop.catch(() => {})
      await client.end().catch(() => {})
      const total = Object.values(counts).reduce((a, b) => a + b, 0)
      return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / total) * 1000) / 10]))
    },
  }
}

