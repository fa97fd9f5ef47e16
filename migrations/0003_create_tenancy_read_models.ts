import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table organizations (
      id uuid primary key,
      name text not null,
      created_at timestamptz not null
    )`.execute(db)
  await sql`
    create table workspaces (
      id uuid primary key,
      organization_id uuid not null,
      name text not null,
      timezone text,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index workspaces_organization_created_idx on workspaces (organization_id, created_at, id)`.execute(db)
  await sql`
    create table api_keys (
      id uuid primary key,
      organization_id uuid not null,
      workspace_id uuid not null,
      name text not null,
      role text not null,
      key_hash text not null,
      key_prefix text not null,
      callback_url text,
      signing_secret text not null,
      created_at timestamptz not null,
      revoked_at timestamptz,
      constraint api_keys_key_hash_unique unique (key_hash)
    )`.execute(db)
  await sql`create index api_keys_workspace_idx on api_keys (workspace_id, created_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_keys').execute()
  await db.schema.dropTable('workspaces').execute()
  await db.schema.dropTable('organizations').execute()
}
