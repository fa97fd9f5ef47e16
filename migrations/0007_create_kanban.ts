import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db)
  await sql`
    create table kanban_pipelines (
      id uuid primary key,
      workspace_id uuid not null,
      name text not null,
      stages jsonb not null,
      fields jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index kanban_pipelines_workspace_created_idx on kanban_pipelines (workspace_id, created_at, id)`.execute(db)

  // The text that card search (`q`) matches: every string and number value, one per line. Defined
  // once here so the generated column and its trigram index always agree.
  await sql`
    create function kanban_card_search_text(field_values jsonb) returns text
    language sql immutable parallel safe
    as $$
      select coalesce(string_agg(v.value #>> '{}', E'\n' order by v.key), '')
      from jsonb_each(field_values) as v
      where jsonb_typeof(v.value) in ('string', 'number')
    $$`.execute(db)
  await sql`
    create table kanban_cards (
      id uuid primary key,
      pipeline_id uuid not null,
      workspace_id uuid not null,
      stage_id uuid not null,
      session_id uuid,
      tags text[] not null,
      field_values jsonb not null,
      search_text text not null generated always as (kanban_card_search_text(field_values)) stored,
      created_at timestamptz not null,
      moved_at timestamptz not null
    )`.execute(db)
  await sql`create index kanban_cards_pipeline_created_idx on kanban_cards (pipeline_id, created_at, id)`.execute(db)
  await sql`create index kanban_cards_pipeline_stage_created_idx on kanban_cards (pipeline_id, stage_id, created_at, id)`.execute(db)
  await sql`create index kanban_cards_tags_idx on kanban_cards using gin (tags)`.execute(db)
  await sql`create index kanban_cards_search_idx on kanban_cards using gin (search_text gin_trgm_ops)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('kanban_cards').execute()
  await sql`drop function kanban_card_search_text(jsonb)`.execute(db)
  await db.schema.dropTable('kanban_pipelines').execute()
}
