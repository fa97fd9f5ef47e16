import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PostgresDialect, type DatabaseConnection, type Dialect, type Driver, type TransactionSettings, CompiledQuery } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import type { Database } from './database.js'
import { PreparingClient } from './prepared.js'

export type DatabaseTarget =
  | {
      kind: 'postgres'
      url: string
      /** The shared pool: the event store, requests, turns, LISTEN connections. */
      poolSize?: number
      /** Connections for read models: one per projection applying at once, and a rebuild beside them. 0: never opened. */
      projectorPoolSize?: number
      /** Connections for webhook claims and attempt records. 0: never opened. */
      dispatcherPoolSize?: number
    }
  /** `dataDir` undefined: in memory (tests), optionally starting from a dump of another instance. */
  | { kind: 'pglite'; dataDir?: string; initialData?: Blob }

/**
 * The `application_name` of the connections projections write read models on. They never append
 * events, so the event store's readers need not wait for their transactions (see `horizon` in
 * src/eventstore/postgres.ts); none of them ever runs anything else.
 */
export const PROJECTOR_APPLICATION_NAME = 'flowd-projector'
/** The same for the webhook dispatcher's connections: claims and attempt records, never an append. */
export const DISPATCHER_APPLICATION_NAME = 'flowd-dispatcher'
/** Connections whose transactions the event store's readers never wait for. */
export const NON_APPENDING_APPLICATION_NAMES = [PROJECTOR_APPLICATION_NAME, DISPATCHER_APPLICATION_NAME]

export interface Storage {
  db: Kysely<Database>
  /** Where projections apply their batches: on Postgres a pool of its own (see PROJECTOR_APPLICATION_NAME); on PGlite `db`. */
  projectorDb: Kysely<Database>
  /** Where the webhook dispatcher claims and records: on Postgres a pool of its own (DISPATCHER_APPLICATION_NAME); on PGlite `db`. */
  dispatcherDb: Kysely<Database>
  target: DatabaseTarget
  /** Present on Postgres: new pools and LISTEN connections use it. */
  pool?: pg.Pool
  /** Present on PGlite. */
  pglite?: PGlite
  /**
   * A handle whose connections resolve names in `schema` first, then in public: a rebuild writes
   * its read models' new tables there under their usual names, through the projections' own code.
   * Destroying it closes what it opened, never the storage.
   */
  inSchema(schema: string): Kysely<Database>
  close(): Promise<void>
}

function newPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...config, Client: PreparingClient })
  // A client losing its connection (the database restarting) must not crash the process. Idle,
  // the pool reports it here and replaces it; in use, the client itself emits 'error' besides
  // failing its query, and the pool drops it when it is released.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

/**
 * For pools whose every statement finds its rows by key. Their statements are prepared, and a
 * generic plan made while a table was young (a new database, a fresh deployment) keeps reading the
 * whole table after it has grown, until the next ANALYZE: a few rows' update scanned thousands of
 * rows on every batch. Without the sequential scan the plan is an index lookup at any size, and so
 * the generic plan is always taken: a statement whose custom plans looked cheaper was otherwise
 * planned again on every run.
 */
const KEYED_ONLY = 'set enable_seqscan = off; set plan_cache_mode = force_generic_plan'

/**
 * For the live read models' connections: a batch's commit does not wait for its WAL flush. What
 * they write is derived from the log and moves with its checkpoint in one transaction, so a crash
 * that loses the last unflushed batches takes their checkpoints back with them, and the reader
 * applies those events again. Any later flushed commit flushes them first, so nothing built on
 * a batch (a delivery claimed and sent) outlives it. A batch's commit returns a flush sooner.
 */
const DERIVED_WRITES = 'set synchronous_commit = off'

/** Runs `settings` first on each new connection of `pool` (a query, not a startup option, which PgBouncer refuses). */
function settingOnConnect(pool: pg.Pool, settings: string): pg.Pool {
  pool.on('connect', (client) => void client.query(settings).catch(() => {}))
  return pool
}

/** The dispatcher's pool: a delivery holds a connection for its claim and its attempt record, not for its POST. */
function dispatcherHandle(url: string, size: number): Kysely<Database> {
  // A claim walks the open deliveries in order. An index scan marks the entries of deliveries sent
  // since as dead as it passes them, so the next claim skips them; a bitmap scan (the planner's
  // pick on a busy outbox's stale estimates) visits them all again until VACUUM comes, so every
  // claim grows with each delivery sent (after 8,500: 4.7 ms, against 0.05 ms with the index scan).
  const dispatcherPool = settingOnConnect(newPool({ connectionString: url, max: size, application_name: DISPATCHER_APPLICATION_NAME }), `${KEYED_ONLY}; set enable_bitmapscan = off`)
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: dispatcherPool }) })
}

/** A handle on a pool this process does not open: any query on it fails naming `what`, so a role using another's pool shows at once. */
const unopened = (what: string): Kysely<Database> =>
  new Kysely<Database>({ dialect: new PostgresDialect({ pool: () => Promise.reject(new Error(`${what} is not open in this process`)) }) })

export async function openStorage(target: DatabaseTarget): Promise<Storage> {
  if (target.kind === 'postgres') {
    const pool = newPool({ connectionString: target.url, max: target.poolSize ?? 10 })
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    const projectorPoolSize = target.projectorPoolSize ?? 16
    const projectorHandle = (options?: string, settings?: string) => {
      if (projectorPoolSize === 0) return unopened('the projector pool, which only a process with the projector role opens')
      const projectorPool = newPool({ connectionString: target.url, max: projectorPoolSize, application_name: PROJECTOR_APPLICATION_NAME, options })
      return new Kysely<Database>({ dialect: new PostgresDialect({ pool: settings ? settingOnConnect(projectorPool, settings) : projectorPool }) })
    }
    const projectorDb = projectorHandle(undefined, `${KEYED_ONLY}; ${DERIVED_WRITES}`)
    const dispatcherPoolSize = target.dispatcherPoolSize ?? 10
    const dispatcherDb = dispatcherPoolSize > 0 ? dispatcherHandle(target.url, dispatcherPoolSize) : unopened('the dispatcher pool, which only a process with the dispatcher role opens')
    return {
      db,
      projectorDb,
      dispatcherDb,
      target,
      pool,
      inSchema: (schema) => projectorHandle(`-c search_path=${schema},public`),
      close: async () => {
        await dispatcherDb.destroy()
        await projectorDb.destroy()
        await db.destroy()
      },
    }
  }
  if (target.dataDir) mkdirSync(target.dataDir, { recursive: true })
  // Card search (`q`) uses trigram indexes, within a pipeline (btree_gin); Postgres ships both in
  // contrib, PGlite as extensions.
  const extensions = { pg_trgm, btree_gin }
  const pglite = target.dataDir ? await PGlite.create(target.dataDir, { extensions }) : await PGlite.create({ loadDataDir: target.initialData, extensions })
  // One driver: it hands PGlite's single connection to one user at a time, whichever handle asks.
  const driver = new TurnTakingDriver(new PGliteDialect(pglite).createDriver())
  const db = new Kysely<Database>({ dialect: withDriver(new PGliteDialect(pglite), driver) })
  return {
    db,
    projectorDb: db,
    dispatcherDb: db,
    target,
    pglite,
    inSchema: (schema) => new Kysely<Database>({ dialect: withDriver(new PGliteDialect(pglite), new SearchPathDriver(driver, `${schema}, public`)) }),
    close: () => db.destroy(),
  }
}

/** Hands every call to the driver of PGlite's one connection; the drivers below change a few of them. */
class ForwardingDriver implements Driver {
  protected readonly shared: Driver

  constructor(shared: Driver) {
    this.shared = shared
  }

  init(): Promise<void> {
    return this.shared.init()
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.shared.acquireConnection()
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.shared.releaseConnection(connection)
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.shared.beginTransaction(connection, settings)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.shared.commitTransaction(connection)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.shared.rollbackTransaction(connection)
  }

  destroy(): Promise<void> {
    return this.shared.destroy()
  }
}

/**
 * PGlite runs its queries on this thread, and its driver hands the connection straight to the next
 * user waiting, through promise callbacks alone: while users queue (a burst of requests), the event
 * loop never gets to its network I/O, so reading another request, a TLS handshake or a webhook's
 * answer waits until the queue is empty. Here each hand-over waits for a turn of the event loop.
 */
class TurnTakingDriver extends ForwardingDriver {
  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve))
    return this.shared.releaseConnection(connection)
  }
}

const withDriver = (dialect: Dialect, driver: Driver): Dialect => ({
  createAdapter: () => dialect.createAdapter(),
  createDriver: () => driver,
  createQueryCompiler: () => dialect.createQueryCompiler(),
  createIntrospector: (db) => dialect.createIntrospector(db),
})

/**
 * PGlite's one connection with another search path while this handle holds it (set on taking it,
 * reset on giving it back), so every other user of the connection keeps the default. It closes
 * nothing: the database belongs to the storage.
 */
class SearchPathDriver extends ForwardingDriver {
  private readonly searchPath: string

  constructor(
    shared: Driver,
    searchPath: string,
  ) {
    super(shared)
    this.searchPath = searchPath
  }

  override async init(): Promise<void> {}

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.shared.acquireConnection()
    try {
      await connection.executeQuery(CompiledQuery.raw(`set search_path to ${this.searchPath}`))
    } catch (error) {
      await this.shared.releaseConnection(connection)
      throw error
    }
    return connection
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('reset search_path'))
    } finally {
      await this.shared.releaseConnection(connection)
    }
  }

  override async destroy(): Promise<void> {}
}
