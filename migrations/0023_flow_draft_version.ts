import { sql, type Kysely } from 'kysely'

// A flow's draft version: one more than the stream revision of the event that wrote the draft
// (FlowCreated or the latest FlowDraftSaved). Filled from the Postgres event store when it lives in
// this database; with another store, rebuilding the flows projection fills it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table flows add column draft_version integer not null default 1`.execute(db)
  const { rows } = await sql<{ present: boolean }>`select to_regclass('events') is not null as present`.execute(db)
  if (!rows[0]?.present) return
  await sql`
    update flows set draft_version = written.revision + 1
    from (
      select stream_id, max(stream_revision) as revision from events
      where event_type in ('FlowCreated', 'FlowDraftSaved') and stream_id like 'flow-%'
      group by stream_id
    ) as written
    where written.stream_id = 'flow-' || flows.id::text`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('flows').dropColumn('draft_version').execute()
}
