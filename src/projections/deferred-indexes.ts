import { sql, type Kysely, type Transaction } from 'kysely'
import { ConflictError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { Database } from '../store/database.js'
import type { Lease, Leases } from '../store/lease.js'
import type { Projection } from './projection.js'

// A full rebuild writes every row of a read model again. Maintaining its secondary indexes row by
// row cost more than the rows themselves (session logs carry eight), while building an index once
// over the filled table is one sort. So a rebuild drops them when it empties the tables and builds
// them when its replay ends. Their definitions wait in `projection_deferred_indexes` meanwhile: if
// the rebuild dies, the next process to start builds them (docs/decisions/read-models.md, "Projection rebuild").
// The kept list totals (migration 0013) go the same way: their triggers are off during the replay,
// and the totals are counted once at its end (`projection_deferred_counts`, migration 0018).

/**
 * Tables whose totals triggers keep, named `<table>_count_<operation>`, each with its
 * `<table>_recount()` (migration 0018). Truncation's trigger stays on: emptying the rows empties them.
 */
const KEPT_COUNTS: readonly string[] = ['session_logs', 'kanban_cards']
const COUNTING_OPERATIONS = ['insert', 'update', 'delete'] as const

/** The lease a rebuild of `projection` holds while it runs: the indexes it deferred are its own to build. */
export const rebuildLeaseName = (projection: string) => `rebuild:${projection}`

/**
 * Drops the secondary indexes of a projection's tables, recording each definition first. Unique
 * indexes and those behind constraints stay: the batch writers' upserts and key lookups need them.
 * Runs in the transaction that empties the tables, so nobody reads them half indexed.
 */
export async function deferSecondaryIndexes(trx: Transaction<Database>, projection: Projection): Promise<void> {
  const { rows } = await sql<{ name: string; definition: string }>`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i
    join pg_class c on c.oid = i.indexrelid
    join pg_class t on t.oid = i.indrelid
    where t.relname = any(${[...projection.tables]}::text[]) and pg_table_is_visible(t.oid)
      and not i.indisunique
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
    order by c.relname`.execute(trx)
  for (const { name, definition } of rows) {
    await trx
      .insertInto('projection_deferred_indexes')
      .values({ index_name: name, projection: projection.name, definition })
      .onConflict((oc) => oc.column('index_name').doNothing())
      .execute()
    await sql`drop index ${sql.id(name)}`.execute(trx)
  }
}

/**
 * Turns off the triggers that keep the totals of a projection's tables, noting the tables first.
 * Runs in the transaction that empties them.
 */
export async function deferKeptCounts(trx: Transaction<Database>, projection: Projection): Promise<void> {
  for (const table of projection.tables.filter((t) => KEPT_COUNTS.includes(t))) {
    await trx.insertInto('projection_deferred_counts').values({ table_name: table, projection: projection.name }).onConflict((oc) => oc.column('table_name').doNothing()).execute()
    for (const operation of COUNTING_OPERATIONS) await sql`alter table ${sql.table(table)} disable trigger ${sql.id(`${table}_count_${operation}`)}`.execute(trx)
  }
}

/**
 * Counts the totals of `projection`'s tables deferred by a rebuild and turns their triggers on again,
 * in one transaction; returns the tables. The table is locked against writes (share mode) before it
 * is counted, so no row escapes both the count and the triggers; that mode lets the deferred indexes
 * be built meanwhile, and turning the triggers on then waits for those builds to commit.
 */
export async function countDeferredTotals(db: Kysely<Database>, projection: string): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const deferred = await trx.selectFrom('projection_deferred_counts').select('table_name').where('projection', '=', projection).orderBy('table_name').forUpdate().execute()
    for (const { table_name: table } of deferred) {
      await sql`lock table ${sql.table(table)} in share mode`.execute(trx)
      await sql`select ${sql.id(`${table}_recount`)}()`.execute(trx)
      for (const operation of COUNTING_OPERATIONS) await sql`alter table ${sql.table(table)} enable trigger ${sql.id(`${table}_count_${operation}`)}`.execute(trx)
    }
    await trx.deleteFrom('projection_deferred_counts').where('projection', '=', projection).execute()
    return deferred.map((d) => d.table_name)
  })
}

/**
 * What a rebuild of `projection` put off until its replay ended: its totals counted and its indexes
 * built, all at once, each on a connection of its own (one after another on the embedded database,
 * which has one). A GIN index over a large table takes seconds to build, single-threaded; the
 * totals' count and the other builds run beside it.
 */
export async function completeDeferred(db: Kysely<Database>, projection: string): Promise<{ counted: string[]; built: string[] }> {
  const counting = countDeferredTotals(db, projection)
  const building = buildDeferredIndexes(db, projection)
  await allOrFirstFailure([counting, building])
  return { counted: await counting, built: await building }
}

/** Builds the indexes deferred for `projection` that do not exist, and forgets them; returns their names. */
export async function buildDeferredIndexes(db: Kysely<Database>, projection: string): Promise<string[]> {
  const deferred = await db.selectFrom('projection_deferred_indexes').select('index_name').where('projection', '=', projection).orderBy('index_name').execute()
  const built = await allOrFirstFailure(deferred.map(({ index_name: name }) => buildDeferredIndex(db, name)))
  return deferred.map((d) => d.index_name).filter((_, i) => built[i])
}

/**
 * Builds one deferred index, unless it exists, and forgets it, in one transaction; whether it built
 * it. The row is locked first: two processes completing the same rebuild build each index once.
 */
async function buildDeferredIndex(db: Kysely<Database>, name: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('projection_deferred_indexes').select('definition').where('index_name', '=', name).forUpdate().executeTakeFirst()
    // Built and forgotten by another process meanwhile.
    if (!row) return false
    const { rows } = await sql<{ present: boolean }>`select to_regclass(quote_ident(${name})) is not null as present`.execute(trx)
    const present = rows[0]?.present ?? false
    // The definition is PostgreSQL's own (pg_get_indexdef) of an index of ours.
    if (!present) await sql.raw(row.definition).execute(trx)
    await trx.deleteFrom('projection_deferred_indexes').where('index_name', '=', name).execute()
    return !present
  })
}

/** Like Promise.all, but settles only once every one has: no build goes on after a failure is reported. */
async function allOrFirstFailure<T>(work: readonly Promise<T>[]): Promise<T[]> {
  const outcomes = await Promise.allSettled(work)
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
  if (failure) throw failure.reason
  return outcomes.map((o) => (o as PromiseFulfilledResult<T>).value)
}

/**
 * Takes the rebuild lease of every projection, or none: a read model can be rebuilt by one process
 * at a time. Without leases (the embedded database: one process) there is nothing to take.
 */
export async function takeRebuildLeases(leases: Leases | undefined, projections: readonly Projection[]): Promise<Lease[]> {
  if (!leases) return []
  const taken: Lease[] = []
  for (const projection of projections) {
    const lease = await leases.tryAcquire(rebuildLeaseName(projection.name))
    if (!lease) {
      await Promise.all(taken.map((l) => l.release()))
      throw new RebuildRunningError(projection.name)
    }
    taken.push(lease)
  }
  return taken
}

/** The CLI exits with "refused" (4) on it, as for any conflict with the state of things. */
export class RebuildRunningError extends ConflictError {
  constructor(readonly projection: string) {
    super(`another process is rebuilding the read model '${projection}'`)
  }
}

/**
 * At start: counts the totals and builds the indexes of rebuilds that ended without (the process
 * died). One still running holds its lease and completes its own.
 */
export async function completeAbandonedDeferred(db: Kysely<Database>, leases: Leases | undefined, logger: Logger): Promise<void> {
  const waiting = await db
    .selectFrom('projection_deferred_indexes')
    .select('projection')
    .union(db.selectFrom('projection_deferred_counts').select('projection'))
    .execute()
  for (const { projection } of waiting) {
    const lease = leases && (await leases.tryAcquire(rebuildLeaseName(projection)))
    if (leases && !lease) continue
    try {
      const { counted, built } = await completeDeferred(db, projection)
      if (counted.length > 0) logger.warn({ projection, tables: counted }, 'counted the totals an interrupted rebuild had left off')
      if (built.length > 0) logger.warn({ projection, indexes: built }, 'built the indexes an interrupted rebuild had dropped')
    } finally {
      await lease?.release()
    }
  }
}
