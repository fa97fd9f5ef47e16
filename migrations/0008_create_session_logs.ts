import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table session_logs (
      id uuid primary key,
      workspace_id uuid not null,
      organization_id uuid not null,
      flow_id uuid not null,
      flow_version integer not null,
      external_id text,
      status text not null,
      warnings integer not null default 0,
      started_at timestamptz not null,
      expires_at timestamptz not null,
      finished_at timestamptz
    )`.execute(db)
  // The log spans an organization, filtered by workspace, status and date, ordered by time.
  await sql`create index session_logs_organization_started_idx on session_logs (organization_id, started_at, id)`.execute(db)
  await sql`create index session_logs_workspace_started_idx on session_logs (workspace_id, started_at, id)`.execute(db)
  await sql`create index session_logs_organization_status_started_idx on session_logs (organization_id, status, started_at, id)`.execute(db)
  // The expiry sweeper looks for running sessions past their expiry.
  await sql`create index session_logs_running_expiry_idx on session_logs (expires_at) where status = 'running'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('session_logs').execute()
}
