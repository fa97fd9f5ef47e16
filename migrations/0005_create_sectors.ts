import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sectors (
      id uuid primary key,
      workspace_id uuid not null,
      organization_id uuid not null,
      name text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index sectors_workspace_created_idx on sectors (workspace_id, created_at, id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sectors').execute()
}
