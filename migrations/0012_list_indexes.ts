import { sql, type Kysely } from 'kysely'

// Lists at scale (docs/performance.md, benchmark 5): the session log filtered by workspace and
// status together, ordered by time, reads one index range instead of filtering the workspace's
// whole range by status.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index session_logs_workspace_status_started_idx on session_logs (workspace_id, status, started_at, id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index session_logs_workspace_status_started_idx`.execute(db)
}
