import { sql, type Kysely } from 'kysely'

// Analysts per organization (docs/analytics.md): each analytics reader role has a scope, one
// organization or every one, in `analytics_readers`, which no analyst may read. The four views that
// read the tables keep the rows of the organizations the current user's scope names; the views
// over them inherit it. A user without a scope sees no row, so a role an analyst may `set role` to
// (the group role `flowd_analyst`) widens nothing. A user who may read the table of scopes
// (its owner, the service's own user, superusers) is not confined by it. `security_barrier` keeps
// an analyst's own functions and operators from seeing rows before the scope has removed them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table analytics_readers (
      role_name text primary key,
      -- null: every organization
      organization_id uuid
    )`.execute(db)
  // Readers made before scopes existed keep reading every organization: the group's members, and
  // theirs, as `set role` and inherited privileges reach them.
  await sql`
    with recursive members(oid) as (
      select m.member from pg_auth_members m join pg_roles g on g.oid = m.roleid where g.rolname = 'flowd_analyst'
      union
      select m.member from pg_auth_members m join members on m.roleid = members.oid
    )
    insert into analytics_readers (role_name, organization_id)
    select r.rolname, null from members join pg_roles r on r.oid = members.oid
    on conflict do nothing`.execute(db)
  await createBaseViews(db, true)
}

/** Whether the current user's scope covers the organization `column` of a row: the rule of every view. */
const inScope = (column: string) =>
  sql.raw(`(
      (select has_table_privilege('public.analytics_readers'::regclass, 'select')
              or exists (select from public.analytics_readers r where r.role_name = current_user and r.organization_id is null))
      or ${column} in (select r.organization_id from public.analytics_readers r where r.role_name = current_user))`)

/** The views of migration 0015 that read tables; `scoped` adds the rule, without it they are 0015's. */
async function createBaseViews(db: Kysely<any>, scoped: boolean): Promise<void> {
  const options = sql.raw(scoped ? 'with (security_barrier)' : '')
  const where = (column: string) => (scoped ? sql`where ${inScope(column)}` : sql``)
  await sql`
    create or replace view analytics.sessions ${options} as
    select s.session_id, s.organization_id, s.workspace_id, w.name as workspace_name, s.flow_id, f.name as flow_name,
           s.flow_version, s.status, s.started_at, s.finished_at,
           extract(epoch from s.finished_at - s.started_at)::double precision as duration_seconds,
           (s.started_at at time zone coalesce(w.timezone, 'UTC'))::date as started_day,
           s.last_node_id, s.turns
    from analytics_sessions s
    left join workspaces w on w.id = s.workspace_id
    left join flows f on f.id = s.flow_id
    ${where('s.organization_id')}`.execute(db)

  await sql`
    create or replace view analytics.node_visits ${options} as
    select n.session_id, n.workspace_id, n.flow_id, f.name as flow_name, n.flow_version, n.node_id,
           (select d.node ->> 'type' from jsonb_array_elements(v.definition -> 'nodes') as d(node) where d.node ->> 'id' = n.node_id limit 1) as node_type,
           n.session_started_at, n.first_reached_at, n.visits, n.answered_at is not null as answered, n.answered_at,
           s.status as session_status, s.last_node_id = n.node_id as session_last_node
    from analytics_session_nodes n
    join analytics_sessions s on s.session_id = n.session_id
    left join flows f on f.id = n.flow_id
    left join flow_versions v on v.flow_id = n.flow_id and v.version = n.flow_version
    ${where('s.organization_id')}`.execute(db)

  await sql`
    create or replace view analytics.transfers ${options} as
    select t.session_id, s.workspace_id, w.name as workspace_name, s.flow_id, s.flow_version, t.target_type, t.target_id,
           case when t.target_type = 'sector' then sc.name end as sector_name,
           t.node_id, t.transferred_at,
           (t.transferred_at at time zone coalesce(w.timezone, 'UTC'))::date as day
    from analytics_transfers t
    join analytics_sessions s on s.session_id = t.session_id
    left join workspaces w on w.id = s.workspace_id
    left join sectors sc on t.target_type = 'sector' and sc.id::text = t.target_id
    ${where('s.organization_id')}`.execute(db)

  // A card's organization is its workspace's.
  await sql`
    create or replace view analytics.card_stage_stays ${options} as
    select c.card_id, c.workspace_id, c.pipeline_id, p.name as pipeline_name, c.stage_id,
           (select st ->> 'name' from jsonb_array_elements(p.stages) as st where st ->> 'id' = c.stage_id::text limit 1) as stage_name,
           c.entered_at, c.left_at, c.left_by,
           extract(epoch from c.left_at - c.entered_at)::double precision as seconds_in_stage,
           (c.entered_at at time zone coalesce(w.timezone, 'UTC'))::date as entered_day,
           (coalesce(c.left_at, now()) at time zone coalesce(w.timezone, 'UTC'))::date as last_day
    from analytics_card_stays c
    left join kanban_pipelines p on p.id = c.pipeline_id
    left join workspaces w on w.id = c.workspace_id
    ${where('w.organization_id')}`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const view of ['sessions', 'node_visits', 'transfers', 'card_stage_stays']) {
    await sql`alter view ${sql.id('analytics', view)} reset (security_barrier)`.execute(db)
  }
  await createBaseViews(db, false)
  await sql`drop table analytics_readers`.execute(db)
}
