import { sql, type Kysely } from 'kysely'

// Analytics (docs/analytics.md): read models for the usual questions, and the `analytics` schema of
// views over them and the other read models: the stable surface analysts query. A view added or
// changed later comes with a migration of its own, and the docs change with it.
export async function up(db: Kysely<any>): Promise<void> {
  // Each session once: where it stands and the last node it reached.
  await sql`
    create table analytics_sessions (
      session_id uuid primary key,
      organization_id uuid not null,
      workspace_id uuid not null,
      flow_id uuid not null,
      flow_version integer not null,
      status text not null,
      started_at timestamptz not null,
      finished_at timestamptz,
      last_node_id text,
      turns integer not null default 0
    )`.execute(db)
  await sql`create index analytics_sessions_workspace_started_idx on analytics_sessions (workspace_id, started_at)`.execute(db)
  await sql`create index analytics_sessions_flow_idx on analytics_sessions (flow_id, flow_version, started_at)`.execute(db)

  // Each node a session reached, once per session.
  await sql`
    create table analytics_session_nodes (
      session_id uuid not null,
      node_id text not null,
      flow_id uuid not null,
      flow_version integer not null,
      workspace_id uuid not null,
      session_started_at timestamptz not null,
      first_reached_at timestamptz not null,
      visits integer not null,
      answered_at timestamptz,
      primary key (session_id, node_id)
    )`.execute(db)
  await sql`create index analytics_session_nodes_flow_idx on analytics_session_nodes (flow_id, flow_version, session_started_at)`.execute(db)

  // Each transfer a turn asked for; a function's timestamp is unique within its session.
  await sql`
    create table analytics_transfers (
      session_id uuid not null,
      timestamp_micros bigint not null,
      target_type text not null,
      target_id text not null,
      node_id text,
      transferred_at timestamptz not null,
      primary key (session_id, timestamp_micros)
    )`.execute(db)
  await sql`create index analytics_transfers_target_idx on analytics_transfers (target_id, transferred_at)`.execute(db)

  // Each stay of a card in a stage, from the card event that put it there.
  await sql`
    create table analytics_card_stays (
      card_id uuid not null,
      entered_revision bigint not null,
      pipeline_id uuid not null,
      workspace_id uuid not null,
      stage_id uuid not null,
      entered_at timestamptz not null,
      left_at timestamptz,
      left_by text,
      primary key (card_id, entered_revision)
    )`.execute(db)
  await sql`create index analytics_card_stays_stage_idx on analytics_card_stays (pipeline_id, stage_id, entered_at)`.execute(db)

  await sql`create schema analytics`.execute(db)

  // Days count in each workspace's own time zone (UTC when it has none), as the lists' date ranges do.
  await sql`
    create view analytics.sessions as
    select s.session_id, s.organization_id, s.workspace_id, w.name as workspace_name, s.flow_id, f.name as flow_name,
           s.flow_version, s.status, s.started_at, s.finished_at,
           extract(epoch from s.finished_at - s.started_at)::double precision as duration_seconds,
           (s.started_at at time zone coalesce(w.timezone, 'UTC'))::date as started_day,
           s.last_node_id, s.turns
    from analytics_sessions s
    left join workspaces w on w.id = s.workspace_id
    left join flows f on f.id = s.flow_id`.execute(db)

  await sql`
    create view analytics.sessions_per_day as
    select workspace_id, workspace_name, started_day as day, status, count(*)::integer as sessions
    from analytics.sessions
    group by workspace_id, workspace_name, started_day, status`.execute(db)

  await sql`
    create view analytics.session_durations as
    select workspace_id, flow_id, flow_name, flow_version, count(*)::integer as finished_sessions,
           percentile_cont(0.5) within group (order by duration_seconds) as median_seconds,
           percentile_cont(0.9) within group (order by duration_seconds) as p90_seconds,
           avg(duration_seconds) as avg_seconds, max(duration_seconds) as max_seconds
    from analytics.sessions
    where finished_at is not null
    group by workspace_id, flow_id, flow_name, flow_version`.execute(db)

  await sql`
    create view analytics.node_visits as
    select n.session_id, n.workspace_id, n.flow_id, f.name as flow_name, n.flow_version, n.node_id,
           (select d.node ->> 'type' from jsonb_array_elements(v.definition -> 'nodes') as d(node) where d.node ->> 'id' = n.node_id limit 1) as node_type,
           n.session_started_at, n.first_reached_at, n.visits, n.answered_at is not null as answered, n.answered_at,
           s.status as session_status, s.last_node_id = n.node_id as session_last_node
    from analytics_session_nodes n
    join analytics_sessions s on s.session_id = n.session_id
    left join flows f on f.id = n.flow_id
    left join flow_versions v on v.flow_id = n.flow_id and v.version = n.flow_version`.execute(db)

  await sql`
    create view analytics.node_funnel as
    select workspace_id, flow_id, flow_name, flow_version, node_id, node_type,
           count(*)::integer as sessions_reached,
           count(*) filter (where answered)::integer as sessions_answered,
           count(*) filter (where session_last_node)::integer as sessions_ended_here,
           count(*) filter (where session_last_node and session_status = 'running')::integer as sessions_waiting_here,
           count(*) filter (where session_last_node and session_status = 'timeout')::integer as sessions_dropped_off,
           count(*) filter (where session_last_node and session_status = 'error')::integer as sessions_failed_here,
           count(*) filter (where session_last_node and session_status = 'completed')::integer as sessions_completed_here
    from analytics.node_visits
    group by workspace_id, flow_id, flow_name, flow_version, node_id, node_type`.execute(db)

  await sql`
    create view analytics.transfers as
    select t.session_id, s.workspace_id, w.name as workspace_name, s.flow_id, s.flow_version, t.target_type, t.target_id,
           case when t.target_type = 'sector' then sc.name end as sector_name,
           t.node_id, t.transferred_at,
           (t.transferred_at at time zone coalesce(w.timezone, 'UTC'))::date as day
    from analytics_transfers t
    join analytics_sessions s on s.session_id = t.session_id
    left join workspaces w on w.id = s.workspace_id
    left join sectors sc on t.target_type = 'sector' and sc.id::text = t.target_id`.execute(db)

  await sql`
    create view analytics.transfers_per_sector_day as
    select workspace_id, workspace_name, day, target_id as sector_id, sector_name, count(*)::integer as transfers, count(distinct session_id)::integer as sessions
    from analytics.transfers
    where target_type = 'sector'
    group by workspace_id, workspace_name, day, target_id, sector_name`.execute(db)

  await sql`
    create view analytics.card_stage_stays as
    select c.card_id, c.workspace_id, c.pipeline_id, p.name as pipeline_name, c.stage_id,
           (select st ->> 'name' from jsonb_array_elements(p.stages) as st where st ->> 'id' = c.stage_id::text limit 1) as stage_name,
           c.entered_at, c.left_at, c.left_by,
           extract(epoch from c.left_at - c.entered_at)::double precision as seconds_in_stage,
           (c.entered_at at time zone coalesce(w.timezone, 'UTC'))::date as entered_day,
           (coalesce(c.left_at, now()) at time zone coalesce(w.timezone, 'UTC'))::date as last_day
    from analytics_card_stays c
    left join kanban_pipelines p on p.id = c.pipeline_id
    left join workspaces w on w.id = c.workspace_id`.execute(db)

  // A card counts on every day it spent some time in the stage, the day it left included.
  await sql`
    create view analytics.cards_per_stage_day as
    select s.workspace_id, s.pipeline_id, s.pipeline_name, s.stage_id, s.stage_name, d.day::date as day,
           count(distinct s.card_id)::integer as cards,
           count(*) filter (where s.entered_day = d.day::date)::integer as entered
    from analytics.card_stage_stays s
    cross join lateral generate_series(s.entered_day, s.last_day, interval '1 day') as d(day)
    group by s.workspace_id, s.pipeline_id, s.pipeline_name, s.stage_id, s.stage_name, d.day::date`.execute(db)

  await sql`
    create view analytics.stage_times as
    select workspace_id, pipeline_id, pipeline_name, stage_id, stage_name,
           count(*)::integer as stays, count(left_at)::integer as finished_stays,
           avg(seconds_in_stage) as avg_seconds,
           percentile_cont(0.5) within group (order by seconds_in_stage) as median_seconds,
           percentile_cont(0.9) within group (order by seconds_in_stage) as p90_seconds
    from analytics.card_stage_stays
    group by workspace_id, pipeline_id, pipeline_name, stage_id, stage_name`.execute(db)

  // The analysts' group role: it reads the analytics schema and nothing else. Roles belong to the
  // whole cluster, so it may exist already (another database, a concurrent migration); and a
  // database user without CREATEROLE skips it (`flowd analytics grant-reader` makes it later).
  await sql`
    do $$
    begin
      if not exists (select from pg_roles where rolname = 'flowd_analyst')
         and exists (select from pg_roles where rolname = current_user and (rolcreaterole or rolsuper)) then
        begin
          create role flowd_analyst nologin;
        exception when duplicate_object or unique_violation then null;
        end;
      end if;
    end
    $$`.execute(db)
  await grantAnalystReads(db)
}

/** Grants `flowd_analyst` the analytics schema's views, those to come included, when the role exists. */
async function grantAnalystReads(db: Kysely<any>): Promise<void> {
  await sql`
    do $$
    begin
      if exists (select from pg_roles where rolname = 'flowd_analyst') then
        grant usage on schema analytics to flowd_analyst;
        grant select on all tables in schema analytics to flowd_analyst;
        alter default privileges in schema analytics grant select on tables to flowd_analyst;
      end if;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  // The role stays: other databases of the cluster may use it.
  await sql`
    do $$
    begin
      if exists (select from pg_roles where rolname = 'flowd_analyst') then
        alter default privileges in schema analytics revoke select on tables from flowd_analyst;
      end if;
    end
    $$`.execute(db)
  await sql`drop schema analytics cascade`.execute(db)
  for (const table of ['analytics_card_stays', 'analytics_transfers', 'analytics_session_nodes', 'analytics_sessions']) {
    await sql`drop table ${sql.table(table)}`.execute(db)
  }
}
