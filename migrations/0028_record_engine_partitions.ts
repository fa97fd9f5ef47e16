import { sql, type Kysely } from 'kysely'

// The number of partitions the engine's sessions are split into (ENGINE_PARTITIONS), as the
// partition checkpoints were made with it: one row, recorded by the first engine that starts and
// changed only by `flowd engine repartition`. Not a read model: a projection rebuild leaves it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table engine_partition_count (
      only_row boolean primary key default true check (only_row),
      partitions integer not null check (partitions between 1 and 256),
      recorded_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('engine_partition_count').execute()
}
