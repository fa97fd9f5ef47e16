import { sql, type Kysely } from 'kysely'

// A full rebuild writes every row of a read model again. The triggers that keep its list totals
// (migration 0013) then ran for every statement of it, about as costly as the rows themselves for
// cards. So a rebuild turns them off while it refills the tables and counts once at the end
// (src/projections/deferred-indexes.ts). The tables waiting for that count are noted here, so that a
// rebuild that dies half way leaves them to be counted by the next process that starts.
/** The workspace of the kept log counts that stand for every workspace of their organization (as in 0013). */
const EVERY_WORKSPACE = `'00000000-0000-0000-0000-000000000000'::uuid`

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table projection_deferred_counts (
      table_name text primary key,
      projection text not null,
      deferred_at timestamptz not null default now()
    )`.execute(db)

  // Each table's totals counted again from its rows. The caller holds the table against writes.
  const recounts = {
    session_logs: `
      truncate session_log_counts, session_log_day_counts;
      insert into session_log_counts (organization_id, workspace_id, status, n)
      select organization_id, w.workspace_id, status, count(*)
      from session_logs cross join lateral (values (session_logs.workspace_id), (${EVERY_WORKSPACE})) as w(workspace_id) group by 1, 2, 3;
      insert into session_log_day_counts (organization_id, workspace_id, day, status, n)
      select organization_id, w.workspace_id, (started_at at time zone 'UTC')::date, status, count(*)
      from session_logs cross join lateral (values (session_logs.workspace_id), (${EVERY_WORKSPACE})) as w(workspace_id) group by 1, 2, 3, 4;`,
    kanban_cards: `
      truncate kanban_card_counts, kanban_card_sums;
      insert into kanban_card_counts (pipeline_id, stage_id, tag, n)
      select pipeline_id, stage_id, t.tag, count(*)
      from kanban_cards cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag) group by 1, 2, 3;
      insert into kanban_card_sums (pipeline_id, stage_id, tag, field_id, total)
      select pipeline_id, stage_id, t.tag, v.key, sum(v.value::numeric)
      from kanban_cards cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag) cross join lateral jsonb_each(field_values) as v
      where jsonb_typeof(v.value) = 'number' group by 1, 2, 3, 4;`,
  }
  for (const [table, body] of Object.entries(recounts)) {
    await sql.raw(`create function ${table}_recount() returns void language plpgsql as $fn$ begin ${body} end $fn$`).execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function kanban_cards_recount()`.execute(db)
  await sql`drop function session_logs_recount()`.execute(db)
  await db.schema.dropTable('projection_deferred_counts').execute()
}
