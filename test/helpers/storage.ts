import { randomBytes } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { Socket } from 'node:net'
import pg from 'pg'
import type { Test } from 'tap'
import { openStorage, type Storage } from '../../src/store/connect.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { migratedPgliteDump, migrationSetKey } from './pglite-template.js'
import { testEveryBackend } from './test-scope.js'

/**
 * DATABASE_URL. With REQUIRE_POSTGRES=1 (.ci/run sets it where PostgreSQL is installed) its absence
 * is an error: every Postgres variant of the tests would otherwise be left out while the run passes.
 */
export const postgresUrl = process.env.DATABASE_URL || refuseToDropPostgres()

/**
 * A pool of its own, as another process holds one, and as the service's pools behave
 * (src/store/connect.ts): a connection the server ends (a test database dropped with force at
 * teardown, perhaps before this pool's own teardown ran) is dropped, never thrown.
 */
export function separatePool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config)
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

function refuseToDropPostgres(): undefined {
  if (process.env.REQUIRE_POSTGRES === '1') {
    throw new Error('REQUIRE_POSTGRES=1 but DATABASE_URL is not set: the tests would leave out every Postgres variant and run on PGlite alone')
  }
  return undefined
}

/**
 * tap runs three test processes at once, and they share the server's max_connections (100 by
 * default). A file that needs most of them for itself (a deployment of many processes) calls this
 * at its top: it then waits for the processes running beside it to end, and those starting
 * meanwhile wait for it. Every other file needs little enough that any three fit.
 */
export function takeServerAlone(): void {
  serverAlone = true
}

let serverAlone = false
let serverShare: Promise<void> | undefined
/** An advisory lock key of the test database's; its value means nothing. */
const SERVER_SHARE_LOCK = 6_414_307

/**
 * Before a file's first database: a shared hold on the server (exclusive after `takeServerAlone`),
 * on a connection of its own kept until the file's process exits. A lock waited for goes first, so an
 * exclusive request is not starved by shared ones that keep coming.
 */
function shareServer(): Promise<void> {
  serverShare ??= (async () => {
    const client = new pg.Client({ connectionString: postgresUrl })
    client.on('error', () => {})
    await client.connect()
    await client.query(serverAlone ? 'select pg_advisory_lock($1)' : 'select pg_advisory_lock_shared($1)', [SERVER_SHARE_LOCK])
    // Held until the process exits, whose end closes the connection and so lets the lock go.
    const { stream } = (client as unknown as { connection: { stream: Socket } }).connection
    stream.unref()
  })()
  return serverShare
}

export interface Backend {
  name: 'pglite' | 'postgres'
  /** A fresh, migrated, empty database of this backend, dropped when the test ends. */
  open(t: Test): Promise<Storage>
}

export const pgliteBackend: Backend = {
  name: 'pglite',
  async open(t) {
    const storage = await openStorage({ kind: 'pglite', initialData: await migratedPgliteDump() })
    t.teardown(() => storage.close())
    await migrateToLatest(storage.db)
    return storage
  },
}

/**
 * Creates a database of its own, so tap's parallel test files never share state. Returns its URL
 * and a function that drops it (after everything using it is closed). On DATABASE_URL's server it
 * is a copy of the migrated template (see {@link migratedTemplateDatabase}) unless `empty` is asked
 * for, and commits without waiting for the disk: the server is the tests' scratch space, and the
 * durability tests start clusters of their own. On `server` (a test's private cluster, shared with
 * no other file) it is empty and durable, as a deployment's would be.
 */
export async function createTestDatabase(server?: string, options: { empty?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = server ?? postgresUrl
  if (!serverUrl) throw new Error('DATABASE_URL is not set')
  const scratch = !server
  if (scratch) await shareServer()
  const template = scratch && !options.empty ? await migratedTemplateDatabase(serverUrl) : undefined
  const name = `flowd_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(template ? `create database ${name} template ${template}` : `create database ${name}`)
    if (scratch) await admin.query(`alter database ${name} set synchronous_commit = off`)
  } finally {
    await admin.end()
  }
  return {
    url: databaseUrl(serverUrl, name),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl })
      await client.connect()
      await client.query(`drop database if exists ${name} with (force)`)
      await client.end()
    },
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** The advisory lock key under which the template is made; its value means nothing. */
const TEMPLATE_LOCK = 6_414_308
let template: Promise<string> | undefined

/**
 * The name of a migrated, empty database on the shared server that test databases are copied from:
 * `create database … template` copies files, where migrating a new database runs every migration
 * again. Named after the migration set, so a change to any migration makes (and uses) a new one;
 * the first test process to need it makes it, under an advisory lock.
 */
function migratedTemplateDatabase(serverUrl: string): Promise<string> {
  return (template ??= (async () => {
    const name = `flowd_template_${migrationSetKey()}`
    const admin = new pg.Client({ connectionString: serverUrl })
    admin.on('error', () => {})
    await admin.connect()
    try {
      await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
      const made = await admin.query('select 1 from pg_database where datname = $1', [name])
      if (made.rowCount) return name
      // Left half-built by a process killed while it held the lock. Templates of other migration
      // sets stay: a checkout of another revision may be testing on this server meanwhile.
      const halfBuilt = await admin.query<{ datname: string }>("select datname from pg_database where datname like 'flowd\\_building\\_%'")
      for (const { datname } of halfBuilt.rows) await admin.query(`drop database if exists ${datname} with (force)`)
      // Built under another name and renamed once migrated, so a process killed midway leaves no
      // half-migrated template behind under the name that is used.
      const building = `flowd_building_${process.pid}_${randomBytes(4).toString('hex')}`
      await admin.query(`create database ${building}`)
      const storage = await openStorage({ kind: 'postgres', url: databaseUrl(serverUrl, building), poolSize: 1, projectorPoolSize: 1, dispatcherPoolSize: 1 })
      try {
        await migrateToLatest(storage.db)
      } finally {
        await storage.close()
      }
      // A closed pool's server processes end a moment later; a copy or rename needs them gone.
      while ((await admin.query('select 1 from pg_stat_activity where datname = $1', [building])).rowCount) await delay(20)
      await admin.query(`alter database ${building} rename to ${name}`)
      return name
    } finally {
      await admin.end()
    }
  })())
}

export const postgresBackend: Backend = {
  name: 'postgres',
  async open(t) {
    const database = await createTestDatabase()
    const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 12, projectorPoolSize: 8 })
    t.teardown(async () => {
      await storage.close()
      await database.drop()
    })
    return storage
  },
}

/**
 * For files whose subject is storage behaviour (event store, store, projections, processors,
 * roles, faults, webhook claims, analytics, partitions, migrations): PGlite always; Postgres when
 * DATABASE_URL is set (required with REQUIRE_POSTGRES=1).
 */
export const reachableBackends: Backend[] = postgresUrl ? [pgliteBackend, postgresBackend] : [pgliteBackend]

/**
 * The one store of a file whose subject is not storage (HTTP validation, paging, authorization,
 * the screens): Postgres where DATABASE_URL is set, as deployed by default, and PGlite otherwise.
 * Postgres is also the quicker of the two here: a copy of the template and native queries, where
 * PGlite boots and queries in the test's own process. PGlite stays proved by the storage files.
 */
export const oneBackend: Backend = postgresUrl ? postgresBackend : pgliteBackend

/** {@link oneBackend} as a list; every reachable store with `TEST_EVERY_BACKEND=1` (test/helpers/test-scope.ts). */
export const apiBackends: Backend[] = testEveryBackend ? reachableBackends : [oneBackend]
