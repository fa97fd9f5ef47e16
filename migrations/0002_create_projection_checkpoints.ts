import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table projection_checkpoints (
      projection text primary key,
      position_commit bigint not null,
      position_prepare bigint not null,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('projection_checkpoints').execute()
}
