import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // The primary key also serves the version list, newest first (read backwards).
  await sql`
    create table flow_versions (
      flow_id uuid not null,
      version integer not null,
      definition jsonb not null,
      published_at timestamptz not null,
      primary key (flow_id, version)
    )`.execute(db)

  await sql`
    create table variables (
      id uuid primary key,
      workspace_id uuid not null,
      name text not null,
      type text not null,
      description text,
      default_value jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  // Names are unique per workspace (the workspace's variables stream decides it); sessions and
  // the flow validator look variables up by name, the list pages by creation.
  await sql`create unique index variables_workspace_name_idx on variables (workspace_id, name)`.execute(db)
  await sql`create index variables_workspace_created_idx on variables (workspace_id, created_at, id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('variables').execute()
  await db.schema.dropTable('flow_versions').execute()
}
