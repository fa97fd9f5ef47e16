import { sql, type Kysely } from 'kysely'

// A rebuild builds its tables in a schema of its own and swaps them in (src/projections/shadow.ts),
// so it no longer drops the live tables' indexes or turns their totals off. What an interrupted
// rebuild of the earlier kind had put off is made here, once, and its two tables go.
export async function up(db: Kysely<any>): Promise<void> {
  const { rows: indexes } = await sql<{ name: string; definition: string }>`select index_name as name, definition from projection_deferred_indexes`.execute(db)
  for (const { name, definition } of indexes) {
    const { rows } = await sql<{ present: boolean }>`select to_regclass(quote_ident(${name})) is not null as present`.execute(db)
    if (!rows[0]?.present) await sql.raw(definition).execute(db)
  }
  const { rows: counts } = await sql<{ table: string }>`select table_name as table from projection_deferred_counts`.execute(db)
  for (const { table } of counts) {
    await sql`select ${sql.id(`${table}_recount`)}()`.execute(db)
    for (const operation of ['insert', 'update', 'delete']) await sql`alter table ${sql.table(table)} enable trigger ${sql.id(`${table}_count_${operation}`)}`.execute(db)
  }
  await sql`drop table projection_deferred_indexes`.execute(db)
  await sql`drop table projection_deferred_counts`.execute(db)
  // Marks of how far a read model had been applied before a rebuild reset its checkpoint: a rebuild
  // no longer resets one.
  await sql`delete from projection_checkpoints where projection like '%@applied-before-rebuild'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  // The two tables as the migrations that made them made them (their backfills find nothing to do).
  await sql`
    create table projection_deferred_indexes (
      index_name text primary key, projection text not null, definition text not null, deferred_at timestamptz not null default now()
    )`.execute(db)
  await sql`create table projection_deferred_counts (table_name text primary key, projection text not null, deferred_at timestamptz not null default now())`.execute(db)
}
