import { sql, type Kysely } from 'kysely'

// The logs of preview sessions (the editor's test panel): the session-logs read model keeps them
// apart from `session_logs`, so the lists, their kept counts and their indexes never see them, and
// `GET /v1/sessions/logs?preview=true` reads them here. The expiry sweeper reads both tables.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table preview_session_logs (
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
  await sql`create index preview_session_logs_organization_started_idx on preview_session_logs (organization_id, started_at, id)`.execute(db)
  await sql`create index preview_session_logs_running_expiry_idx on preview_session_logs (expires_at) where status = 'running'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table preview_session_logs`.execute(db)
}
