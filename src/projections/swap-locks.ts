import { sql, type Kysely } from 'kysely'
import type { Database } from '../store/database.js'

// A swap needs every lock on a read model's live tables. While it waits for one, every new reader
// of that table queues behind it (PostgreSQL grants locks in order), so an attempt waits only a
// moment, lets its queue go, pauses and tries again, for as long as a transaction holds the table:
// the rebuild's work is kept, and the connection in the way is named.

/** How a swap waits for its locks. */
export interface SwapPacing {
  /** The longest an attempt waits for a lock: the longest a reader arriving meanwhile queues behind it. */
  lockTimeoutMs: number
  /** The longest pause between attempts (they start 50 ms apart and double up to it). */
  pauseMs: number
}

export const SWAP_PACING: SwapPacing = { lockTimeoutMs: 100, pauseMs: 2_000 }

/** A connection holding a lock on a live table the swap needs, as pg_stat_activity shows it. */
export interface LockHolder {
  pid: number
  applicationName: string
  clientAddress: string | null
  user: string | null
  /** active, idle in transaction, ... */
  state: string | null
  /** When its transaction began. */
  since: Date | null
  query: string | null
}

export interface SwapBlocked {
  projection: string
  /** Attempts that could not get their locks so far. */
  attempts: number
  waitingSince: Date
  /** Oldest transaction first: the one in the way is most likely the first. */
  holders: LockHolder[]
}

/** Whether `error` is a lock wait that ran out of `lock_timeout` (SQLSTATE 55P03). */
export const isLockTimeout = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === '55P03'

/**
 * The other connections holding locks on `tables` (public), oldest transaction first. Asked once an
 * attempt has let go of its own locks: its lock request is gone, so pg_blocking_pids has nothing to
 * say about it, while every lock granted on the table conflicts with the swap's.
 */
export async function lockHolders(db: Kysely<Database>, tables: readonly string[]): Promise<LockHolder[]> {
  const { rows } = await sql<{ pid: number; applicationName: string; clientAddress: string | null; user: string | null; state: string | null; since: Date | string | null; query: string | null }>`
    select a.pid, a.application_name as "applicationName", host(a.client_addr) as "clientAddress", a.usename as "user", a.state,
      a.xact_start as since, left(a.query, 200) as query
    from pg_stat_activity a
    where a.pid <> pg_backend_pid()
      and exists (select 1 from pg_locks l where l.pid = a.pid and l.granted and l.locktype = 'relation'
                  and l.relation = any(${tables.map((table) => `public.${table}`)}::regclass[]))
    order by a.xact_start nulls last, a.pid`.execute(db)
  return rows.map((row) => ({ ...row, since: row.since === null ? null : new Date(row.since) }))
}

/** One line naming a holder, for logs and the CLI. */
export const describeHolder = (holder: LockHolder): string =>
  `pid ${holder.pid}${holder.applicationName ? ` (${holder.applicationName})` : ''}${holder.user ? ` user ${holder.user}` : ''}` +
  `${holder.clientAddress ? ` from ${holder.clientAddress}` : ''}, ${holder.state ?? 'state unknown'}` +
  `${holder.since ? ` since ${holder.since.toISOString()}` : ''}${holder.query ? `: ${holder.query}` : ''}`
