import { sql, type Kysely } from 'kysely'

// A full rebuild drops a read model's secondary indexes while it refills the tables and builds them
// again at the end (src/projections/deferred-indexes.ts). Their definitions wait here meanwhile, so
// a rebuild that dies half way leaves them to be built by the next process that starts.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table projection_deferred_indexes (
      index_name text primary key,
      projection text not null,
      definition text not null,
      deferred_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('projection_deferred_indexes').execute()
}
