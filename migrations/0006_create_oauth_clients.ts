import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table oauth_clients (
      id uuid primary key,
      organization_id uuid not null,
      workspace_id uuid not null,
      name text not null,
      secret_hash text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db)
  // Lists show live clients of one workspace, oldest first.
  await sql`create index oauth_clients_workspace_created_idx on oauth_clients (workspace_id, created_at, id) where revoked_at is null`.execute(db)
  // The API-key list of an organization admin spans the organization (0003 indexed only by workspace).
  await sql`create index api_keys_organization_created_idx on api_keys (organization_id, created_at, id) where revoked_at is null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index api_keys_organization_created_idx`.execute(db)
  await db.schema.dropTable('oauth_clients').execute()
}
