import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../store/database.js'
import type { Projection } from './projection.js'
import { dropDependents, readDependents, recreateDependents, refuseUnkeptDependentsIn } from './shadow-dependents.js'

// A rebuild never empties a table anyone reads. It builds each read model's tables anew in a schema
// of its own, under their usual names, through the projections' own code (its connections look in
// that schema first), and swaps them in: one short transaction drops the live tables and moves the
// new ones into public, with their names, indexes, constraints and triggers, and recreates the views
// and foreign keys that hang on them. A rebuild that dies leaves its schema behind and the live
// tables untouched; the next rebuild drops it.

/** Where a rebuild builds the new tables. */
export const SHADOW_SCHEMA = 'flowd_rebuild'

/**
 * Tables whose totals triggers keep (migration 0013), each with its `<table>_recount()` (migration
 * 0018). A rebuild's new tables get those triggers once filled, and their totals are counted once.
 */
const KEPT_COUNTS: readonly string[] = ['session_logs', 'kanban_cards']

/** What a new table gets once filled: made before, they would cost more than the rows themselves. */
export interface DeferredDefinitions {
  /** Secondary indexes (not unique, not behind a constraint). */
  indexes: string[]
  triggers: string[]
  /** Tables whose kept totals are counted once the rows are in. */
  recounts: string[]
}

/** Drops what an earlier rebuild left and makes the schema, with a checkpoint table of its own. */
export async function prepareShadowSchema(db: Kysely<Database>): Promise<void> {
  await sql`drop schema if exists ${sql.id(SHADOW_SCHEMA)} cascade`.execute(db)
  await sql`create schema ${sql.id(SHADOW_SCHEMA)}`.execute(db)
  await sql`create table ${sql.id(SHADOW_SCHEMA, 'projection_checkpoints')} (like public.projection_checkpoints including all)`.execute(db)
}

export async function dropShadowSchema(db: Kysely<Database>): Promise<void> {
  await sql`drop schema if exists ${sql.id(SHADOW_SCHEMA)} cascade`.execute(db)
}

/**
 * Makes empty copies of a projection's tables in the shadow schema: columns, defaults, checks,
 * generated columns and the unique keys the writers' upserts need, each under its live name.
 * Returns the rest (secondary indexes, triggers, totals), made once the replay has filled them.
 */
export async function createShadowTables(db: Kysely<Database>, projection: Projection): Promise<DeferredDefinitions> {
  return db.transaction().execute(async (trx) => {
    // Definitions printed with every name qualified, so they can be pointed at the shadow table.
    await sql`set local search_path to pg_catalog`.execute(trx)
    const deferred: DeferredDefinitions = { indexes: [], triggers: [], recounts: [] }
    for (const table of projection.tables) {
      await sql`create table ${sql.id(SHADOW_SCHEMA, table)} (like ${sql.id('public', table)} including defaults including constraints including generated including storage)`.execute(trx)
      const { rows: constraints } = await sql<{ name: string; definition: string }>`
        select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = ${`public.${table}`}::regclass and contype in ('p', 'u', 'x') order by conname`.execute(trx)
      for (const { name, definition } of constraints) {
        await sql`alter table ${sql.id(SHADOW_SCHEMA, table)} add constraint ${sql.id(name)} ${sql.raw(definition)}`.execute(trx)
      }
      const { rows: indexes } = await sql<{ definition: string; unique: boolean }>`
        select pg_get_indexdef(i.indexrelid) as definition, i.indisunique as unique from pg_index i
        where i.indrelid = ${`public.${table}`}::regclass
          and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
        order by i.indexrelid`.execute(trx)
      for (const { definition, unique } of indexes) {
        const onShadow = pointAtShadow(definition, table)
        if (unique) await sql.raw(onShadow).execute(trx)
        else deferred.indexes.push(onShadow)
      }
      const { rows: triggers } = await sql<{ definition: string }>`
        select pg_get_triggerdef(oid) as definition from pg_trigger
        where tgrelid = ${`public.${table}`}::regclass and not tgisinternal order by tgname`.execute(trx)
      deferred.triggers.push(...triggers.map(({ definition }) => pointAtShadow(definition, table)))
      if (KEPT_COUNTS.includes(table)) deferred.recounts.push(table)
    }
    return deferred
  })
}

/** A definition PostgreSQL printed for a live table, made for its shadow. */
function pointAtShadow(definition: string, table: string): string {
  const live = ` ON public.${table} `
  if (!definition.includes(live)) throw new Error(`cannot place on the rebuild's table: ${definition}`)
  return definition.replace(live, ` ON ${SHADOW_SCHEMA}.${table} `)
}

/**
 * Builds a filled shadow table's secondary indexes and counts its kept totals, all at once, each on a
 * connection of its own (a GIN index over a large table takes seconds, single-threaded; nothing
 * else writes the tables meanwhile), then gathers the planner statistics the live table had and
 * adds the triggers. `shadowDb` resolves names in the shadow schema first, as the
 * `<table>_recount()` functions need.
 */
export async function completeShadowTables(shadowDb: Kysely<Database>, projection: Projection, deferred: DeferredDefinitions): Promise<void> {
  await Promise.all([
    ...deferred.indexes.map((definition) => sql.raw(definition).execute(shadowDb)),
    ...deferred.recounts.map((table) => sql`select ${sql.id('public', `${table}_recount`)}()`.execute(shadowDb)),
  ])
  await Promise.all(projection.tables.map((table) => sql`analyze ${sql.id(SHADOW_SCHEMA, table)}`.execute(shadowDb)))
  await shadowDb.transaction().execute(async (trx) => {
    for (const definition of deferred.triggers) await sql.raw(definition).execute(trx)
  })
}

/**
 * In the swap's transaction: replaces a projection's live tables with its shadow tables, making the
 * views and foreign keys that hang on them again as they were (shadow-dependents.ts). The caller
 * holds the projection's checkpoint row and has caught the shadow up to it.
 */
export async function swapInShadowTables(trx: Transaction<Database>, projection: Projection): Promise<void> {
  if (projection.tables.length === 0) return
  const { rows: [current] } = await sql<{ searchPath: string }>`select current_setting('search_path') as "searchPath"`.execute(trx)
  const searchPath = current!.searchPath
  await sql`set local search_path to pg_catalog`.execute(trx)
  await refuseUnkeptDependentsIn(trx, projection.tables)
  const dependents = await readDependents(trx, projection.tables)
  await dropDependents(trx, projection.tables, dependents)
  // Restrict: whatever else hangs on them fails the swap.
  await sql`drop table ${sql.join(projection.tables.map((table) => sql.id('public', table)))} restrict`.execute(trx)
  for (const table of projection.tables) await sql`alter table ${sql.id(SHADOW_SCHEMA, table)} set schema public`.execute(trx)
  await recreateDependents(trx, dependents)
  await sql`select set_config('search_path', ${searchPath}, true)`.execute(trx)
}
