import { sql, type Kysely } from 'kysely'

// Release history (docs/testing-flows.md, "Publishing safely"): every change of the versions new
// sessions start on, one row per flow event that made it (a publish, a rollback, a share, a
// promotion, an end of release), keyed by the event's revision in the flow's stream; a publish's row
// names the version it made (`published_version`). Where the flow events are not in this database,
// the publishes made before this table come from `flow_versions`, keyed by the negated version (their
// revision is unknown), which sorts them before every later row of their flow.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table flow_releases (
      flow_id uuid not null,
      revision bigint not null,
      reason text not null,
      published_version integer,
      live_version integer not null,
      gradual_version integer,
      gradual_percent integer,
      changed_at timestamptz not null,
      primary key (flow_id, revision)
    )`.execute(db)
  // On the Postgres event store the flow events are at hand, and the rows are what the projection
  // makes of them; with another store, the publishes come from `flow_versions`.
  const { rows } = await sql<{ present: boolean }>`select to_regclass('events') is not null as present`.execute(db)
  if (!rows[0]?.present) {
    await sql`
      insert into flow_releases (flow_id, revision, reason, published_version, live_version, changed_at)
      select flow_id, -version, 'publish', version, version, published_at from flow_versions`.execute(db)
    return
  }
  await sql`
    insert into flow_releases (flow_id, revision, reason, published_version, live_version, gradual_version, gradual_percent, changed_at)
    select substr(stream_id, 6)::uuid, stream_revision,
           case when event_type = 'FlowPublished' then 'publish' else data->>'reason' end,
           case when event_type = 'FlowPublished' then (data->>'version')::integer end,
           case when event_type = 'FlowPublished' then (data->>'version')::integer else (data->>'liveVersion')::integer end,
           (data->'gradual'->>'version')::integer, (data->'gradual'->>'percent')::integer,
           coalesce(data->>'publishedAt', data->>'changedAt')::timestamptz
    from events
    where stream_id like 'flow-%' and event_type in ('FlowPublished', 'FlowReleaseChanged')`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table flow_releases`.execute(db)
}
