import { sql, type Kysely } from 'kysely'

// Replays (docs/testing-flows.md): one row per replay of a flow's sessions against its draft, for
// the list of a flow's replays and for the runner to find the unfinished ones, oldest first.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table flow_replays (
      replay_id uuid primary key,
      flow_id uuid not null,
      workspace_id uuid not null,
      organization_id uuid not null,
      version integer not null,
      draft_version integer not null,
      status text not null,
      total integer not null,
      checked integer not null,
      differing integer not null,
      requested_at timestamptz not null,
      finished_at timestamptz
    )`.execute(db)
  await sql`create index flow_replays_flow_idx on flow_replays (flow_id, requested_at)`.execute(db)
  await sql`create index flow_replays_unfinished_idx on flow_replays (requested_at) where status = 'running'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table flow_replays`.execute(db)
}
