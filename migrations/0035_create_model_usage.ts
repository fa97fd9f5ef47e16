import { sql, type Kysely } from 'kysely'

// Model usage (docs/analytics.md): the model calls each turn's AI steps made, per model, and the
// view of them per workspace, flow, day and model. The table fills in from the whole log when its
// projection first runs, as every read model does. The view reads `analytics.sessions`, which keeps
// to the reader's scope (migration 0026), and is a security barrier of its own so that an analyst's
// function runs only on the rows that scope kept. `flowd_analyst` may select it through the default
// privileges of migration 0015.
export async function up(db: Kysely<any>): Promise<void> {
  // One turn answers one trigger (`message_id`) of its session.
  await sql`
    create table analytics_model_calls (
      session_id uuid not null,
      message_id uuid not null,
      model text not null,
      called_at timestamptz not null,
      calls integer not null,
      prompt_tokens integer not null,
      completion_tokens integer not null,
      primary key (session_id, message_id, model)
    )`.execute(db)

  // Days count in each workspace's own time zone, as the other views' do; a turn's calls count on the day it completed.
  await sql`
    create view analytics.model_usage_per_day with (security_barrier) as
    select s.workspace_id, s.workspace_name, s.flow_id, s.flow_name,
           (m.called_at at time zone coalesce(w.timezone, 'UTC'))::date as day, m.model,
           sum(m.calls)::integer as calls,
           sum(m.prompt_tokens)::bigint as prompt_tokens,
           sum(m.completion_tokens)::bigint as completion_tokens,
           count(distinct m.session_id)::integer as sessions
    from analytics_model_calls m
    join analytics.sessions s on s.session_id = m.session_id
    left join workspaces w on w.id = s.workspace_id
    group by s.workspace_id, s.workspace_name, s.flow_id, s.flow_name, day, m.model`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view analytics.model_usage_per_day`.execute(db)
  await sql`drop table analytics_model_calls`.execute(db)
}
