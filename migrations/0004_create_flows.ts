import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table flows (
      id uuid primary key,
      workspace_id uuid not null,
      organization_id uuid not null,
      name text not null,
      draft jsonb not null,
      published_version integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  // The flow list spans an organization, filtered by workspace and date, ordered by a few columns.
  await sql`create index flows_organization_created_idx on flows (organization_id, created_at, id)`.execute(db)
  await sql`create index flows_organization_updated_idx on flows (organization_id, updated_at, id)`.execute(db)
  await sql`create index flows_organization_name_idx on flows (organization_id, name, id)`.execute(db)
  await sql`create index flows_workspace_created_idx on flows (workspace_id, created_at, id)`.execute(db)
  await sql`create index workspaces_organization_lower_name_idx on workspaces (organization_id, lower(name))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index workspaces_organization_lower_name_idx`.execute(db)
  await db.schema.dropTable('flows').execute()
}
