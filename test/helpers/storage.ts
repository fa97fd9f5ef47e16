import { randomBytes } from 'node:crypto'
import type { Socket } from 'node:net'
import pg from 'pg'
import type { Test } from 'tap'
import { openStorage, type Storage } from '../../src/store/connect.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { migratedPgliteDump } from './pglite-template.js'

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
 * tap runs two test files at once, and they share the server's max_connections (100 by default).
 * A file that needs most of them for itself (a deployment of many processes) calls this at its
 * top: it then waits for the files running beside it to end, and files starting meanwhile wait
 * for it. Every other file needs little enough that any two fit.
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
 * and a function that drops it (after everything using it is closed). On DATABASE_URL's server
 * unless `server` names another (a test's private cluster, shared with no other file).
 */
export async function createTestDatabase(server?: string): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = server ?? postgresUrl
  if (!serverUrl) throw new Error('DATABASE_URL is not set')
  if (!server) await shareServer()
  const name = `flowd_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl })
      await client.connect()
      await client.query(`drop database if exists ${name} with (force)`)
      await client.end()
    },
  }
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
    await migrateToLatest(storage.db)
    return storage
  },
}

/** PGlite always; Postgres when DATABASE_URL is set (required with REQUIRE_POSTGRES=1). */
export const reachableBackends: Backend[] = postgresUrl ? [pgliteBackend, postgresBackend] : [pgliteBackend]
