import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Transaction } from 'kysely'
import pg from 'pg'
import type { Logger } from '../logger.js'

/** A named piece of work this process may do alone while it holds the lease. */
export interface Lease {
  /** Aborts when the lease is lost (its connection closed or stopped answering): stop the work. */
  readonly lost: AbortSignal
  release(): Promise<void>
}

export interface Leases {
  /** Takes the lease `name` unless another process (or this one) holds it; undefined then. */
  tryAcquire(name: string): Promise<Lease | undefined>
  /** How many processes have a lease connection of this kind (its `application_name`) on the database, this one included. */
  processes(): Promise<number>
  close(): Promise<void>
}

/** The `application_name` of lease connections, to tell them apart in `pg_stat_activity`. */
export const LEASE_APPLICATION_NAME = 'flowd-lease'
/** How often a standby tries to take a lease: the longest a dead holder's work waits for a new one. */
export const LEASE_RETRY_MS = 1000
/** How often the lease connection proves it is alive; a silent network loses the leases after this plus the query timeout. */
const HEARTBEAT_MS = 5000
const QUERY_TIMEOUT_MS = 5000

interface Connection {
  client: pg.Client
  /** Name → the controller aborting that lease's `lost`. */
  held: Map<string, AbortController>
  heartbeat?: NodeJS.Timeout
  dropped: boolean
  /** Queries on the connection run one after the other (pg no longer queues them for us). */
  queue: Promise<unknown>
  /** Ends the session: every lock it holds is freed and every lease on it is lost. */
  drop(reason: string): void
}

function query<R extends pg.QueryResultRow>(connection: Connection, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  const result = connection.queue.then(() => connection.client.query<R>(text, values))
  connection.queue = result.catch(() => {})
  return result
}

/**
 * Leases as Postgres session-level advisory locks (`pg_try_advisory_lock`), all on one connection
 * of their own held while any lease is: when the process dies, the database closes the
 * session and every lock it held is free for a standby. When the connection fails, every lease is
 * lost at once and the next `tryAcquire` opens a new one.
 */
export class AdvisoryLeases implements Leases {
  private connection?: Promise<Connection>
  private current?: Connection
  private closed = false

  private readonly connectionString: string
  private readonly logger: Logger
  private readonly applicationName: string

  constructor(connectionString: string, logger: Logger, applicationName = LEASE_APPLICATION_NAME) {
    this.connectionString = connectionString
    this.logger = logger
    this.applicationName = applicationName
  }

  async tryAcquire(name: string): Promise<Lease | undefined> {
    if (this.closed) return undefined
    const connection = await this.connect()
    // Advisory locks nest within a session: taking one already held here would succeed again.
    if (connection.held.has(name)) return undefined
    const { rows } = await query<{ acquired: boolean }>(connection, 'select pg_try_advisory_lock(hashtextextended($1, 0)) as acquired', [leaseKey(name)]).catch(
      (error: unknown) => {
        // Unanswered, the lock may still have been taken: only ending the session makes sure it is not held unused.
        connection.drop(error instanceof Error ? error.message : String(error))
        throw error
      },
    )
    if (!rows[0]?.acquired) return undefined
    const controller = new AbortController()
    connection.held.set(name, controller)
    if (connection.dropped) controller.abort()
    return {
      lost: controller.signal,
      release: async () => {
        if (connection.held.get(name) !== controller) return
        connection.held.delete(name)
        controller.abort()
        if (!connection.dropped) await query(connection, 'select pg_advisory_unlock(hashtextextended($1, 0))', [leaseKey(name)]).catch(() => {})
      },
    }
  }

  async processes(): Promise<number> {
    if (this.closed) return 0
    const connection = await this.connect()
    const { rows } = await query<{ processes: number }>(
      connection,
      'select count(*)::int as processes from pg_stat_activity where application_name = $1 and datname = current_database()',
      [this.applicationName],
    )
    return rows[0]?.processes ?? 1
  }

  private connect(): Promise<Connection> {
    this.connection ??= this.open().catch((error: unknown) => {
      this.connection = undefined
      throw error
    })
    return this.connection
  }

  private async open(): Promise<Connection> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: this.applicationName, keepAlive: true, query_timeout: QUERY_TIMEOUT_MS })
    const drop = (reason: string) => {
      if (connection.dropped) return
      connection.dropped = true
      clearInterval(connection.heartbeat)
      if (this.current === connection) {
        this.current = undefined
        this.connection = undefined
      }
      if (connection.held.size > 0 && !this.closed) this.logger.warn({ leases: [...connection.held.keys()], reason }, 'lease connection lost; its leases are given up')
      for (const controller of connection.held.values()) controller.abort()
      connection.held.clear()
      void client.end().catch(() => {})
    }
    const connection: Connection = { client, held: new Map(), dropped: false, queue: Promise.resolve(), drop }
    client.on('error', (error) => drop(error.message))
    client.on('end', () => drop('connection closed'))
    await client.connect()
    connection.heartbeat = setInterval(() => {
      query(connection, 'select 1').catch((error: unknown) => drop(error instanceof Error ? error.message : String(error)))
    }, HEARTBEAT_MS)
    connection.heartbeat.unref()
    this.current = connection
    return connection
  }

  async close(): Promise<void> {
    this.closed = true
    const connection = await this.connection?.catch(() => undefined)
    this.connection = undefined
    if (!connection) return
    connection.dropped = true
    clearInterval(connection.heartbeat)
    for (const controller of connection.held.values()) controller.abort()
    connection.held.clear()
    // Ending the session frees every lock it holds.
    await connection.client.end().catch(() => {})
  }
}

const leaseKey = (name: string) => `flowd:${name}`

/**
 * Takes the leases `names` until `trx` ends, so that no process takes one meanwhile; false when a
 * process holds one of them (the others taken stay taken until `trx` ends).
 */
export async function holdLeasesFor(trx: Transaction<any>, names: readonly string[]): Promise<boolean> {
  const { rows } = await sql<{ free: boolean | null }>`
    select bool_and(pg_try_advisory_xact_lock(hashtextextended(k, 0))) as free from unnest(${names.map(leaseKey)}::text[]) as k`.execute(trx)
  return rows[0]?.free !== false
}

/**
 * Runs `work` while this process holds the lease `name`, standing by (trying again every
 * `retryMs`) while another holds it, until `signal` aborts. `work` gets a signal that aborts on
 * either and must return soon after. Without leases (the embedded database: one process) it just
 * runs `work`.
 */
export async function whileLeased(
  leases: Leases | undefined,
  name: string,
  signal: AbortSignal,
  work: (signal: AbortSignal) => Promise<void>,
  logger: Logger,
  retryMs = LEASE_RETRY_MS,
): Promise<void> {
  if (!leases) return work(signal)
  let standingBy = false
  while (!signal.aborted) {
    const lease = await leases.tryAcquire(name).catch((error: unknown) => {
      logger.warn({ err: error, lease: name }, 'could not ask for a lease; trying again')
      return undefined
    })
    if (!lease) {
      if (!standingBy) logger.info({ lease: name }, 'another process holds the lease; standing by')
      standingBy = true
      await delay(retryMs, undefined, { signal }).catch(() => {})
      continue
    }
    standingBy = false
    logger.info({ lease: name }, 'lease taken; active')
    let failed = false
    try {
      await work(AbortSignal.any([signal, lease.lost]))
    } catch (error) {
      logger.error({ err: error, lease: name }, 'leased work failed; giving the lease up')
      failed = true
    } finally {
      await lease.release()
    }
    if (failed) await delay(retryMs, undefined, { signal }).catch(() => {})
    if (!signal.aborted) logger.warn({ lease: name }, 'lease lost; standing by')
  }
}
