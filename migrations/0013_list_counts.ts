import { sql, type Kysely } from 'kysely'

// Lists at scale (docs/performance.md, benchmark 5; docs/decisions.md, "Kept list counts"): the
// list envelopes' exact `totalElements` and card `aggregations` are read from counts kept beside
// the rows instead of counting every matching row. Statement-level triggers keep them, in the
// transaction of every write to the rows, whoever writes (a projection's batch, a rebuild, a bulk
// load); truncating the rows truncates them too.
/** The workspace of the kept log counts that stand for every workspace of their organization. */
const EVERY_WORKSPACE = `'00000000-0000-0000-0000-000000000000'::uuid`

export async function up(db: Kysely<any>): Promise<void> {
  // Session logs per workspace and status, and the same per UTC day of `started_at` for date ranges
  // and deep pages. The nil uuid stands for every workspace of the organization (no workspace has it).
  await sql`
    create table session_log_counts (
      organization_id uuid not null,
      workspace_id uuid not null,
      status text not null,
      n bigint not null,
      primary key (organization_id, workspace_id, status)
    )`.execute(db)
  await sql`
    create table session_log_day_counts (
      organization_id uuid not null,
      workspace_id uuid not null,
      day date not null,
      status text not null,
      n bigint not null,
      primary key (organization_id, workspace_id, day, status)
    )`.execute(db)

  // Cards per stage and tag ('' stands for every card: a tag is never empty), and the sums of
  // their number values per field.
  await sql`
    create table kanban_card_counts (
      pipeline_id uuid not null,
      stage_id uuid not null,
      tag text not null,
      n bigint not null,
      primary key (pipeline_id, tag, stage_id)
    )`.execute(db)
  await sql`
    create table kanban_card_sums (
      pipeline_id uuid not null,
      stage_id uuid not null,
      tag text not null,
      field_id text not null,
      total numeric not null,
      primary key (pipeline_id, tag, stage_id, field_id)
    )`.execute(db)

  // Each changed row counts +1 as it is now and -1 as it was; keys whose changes cancel out (a
  // message's new expiry, a card's note) are not written. One function per operation, as each sees
  // only its own transition tables; static SQL, so that its plan is kept.
  const keptBy = {
    session_logs: {
      columns: 'organization_id, workspace_id, status, started_at',
      upsert: `
        scoped as (
          select organization_id, w.workspace_id, status, started_at, d
          from changes cross join lateral (values (changes.workspace_id), (${EVERY_WORKSPACE})) as w(workspace_id)
        ),
        totals as (
          insert into session_log_counts as c (organization_id, workspace_id, status, n)
          select organization_id, workspace_id, status, sum(d) from scoped
          group by 1, 2, 3 having sum(d) <> 0
          on conflict (organization_id, workspace_id, status) do update set n = c.n + excluded.n
        )
        insert into session_log_day_counts as c (organization_id, workspace_id, day, status, n)
        select organization_id, workspace_id, (started_at at time zone 'UTC')::date, status, sum(d) from scoped
        group by 1, 2, 3, 4 having sum(d) <> 0
        on conflict (organization_id, workspace_id, day, status) do update set n = c.n + excluded.n`,
      truncate: 'session_log_counts, session_log_day_counts',
    },
    kanban_cards: {
      columns: 'pipeline_id, stage_id, tags, field_values',
      upsert: `
        keyed as (
          select pipeline_id, stage_id, t.tag, field_values, d
          from changes cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag)
        ),
        counts as (
          insert into kanban_card_counts as c (pipeline_id, stage_id, tag, n)
          select pipeline_id, stage_id, tag, sum(d) from keyed
          group by 1, 2, 3 having sum(d) <> 0
          on conflict (pipeline_id, tag, stage_id) do update set n = c.n + excluded.n
        )
        insert into kanban_card_sums as s (pipeline_id, stage_id, tag, field_id, total)
        select k.pipeline_id, k.stage_id, k.tag, v.key, sum(k.d * v.value::numeric)
        from keyed k cross join lateral jsonb_each(k.field_values) as v
        where jsonb_typeof(v.value) = 'number'
        group by 1, 2, 3, 4 having sum(k.d * v.value::numeric) <> 0
        on conflict (pipeline_id, tag, stage_id, field_id) do update set total = s.total + excluded.total`,
      truncate: 'kanban_card_counts, kanban_card_sums',
    },
  }
  for (const [table, { columns, upsert, truncate }] of Object.entries(keptBy)) {
    const operations = {
      insert: { transitions: 'new table as new_rows', changes: `select ${columns}, 1 as d from new_rows` },
      update: {
        transitions: 'old table as old_rows new table as new_rows',
        changes: `select ${columns}, 1 as d from new_rows union all select ${columns}, -1 from old_rows`,
      },
      delete: { transitions: 'old table as old_rows', changes: `select ${columns}, -1 as d from old_rows` },
    }
    for (const [operation, { transitions, changes }] of Object.entries(operations)) {
      await sql
        .raw(
          `create function ${table}_count_${operation}() returns trigger language plpgsql as $fn$
          begin
            with changes as (${changes}), ${upsert};
            return null;
          end
          $fn$`,
        )
        .execute(db)
      await sql
        .raw(`create trigger ${table}_count_${operation} after ${operation} on ${table} referencing ${transitions} for each statement execute function ${table}_count_${operation}()`)
        .execute(db)
    }
    await sql.raw(`create function ${table}_count_truncate() returns trigger language plpgsql as $fn$ begin truncate ${truncate}; return null; end $fn$`).execute(db)
    await sql.raw(`create trigger ${table}_count_truncate after truncate on ${table} for each statement execute function ${table}_count_truncate()`).execute(db)
  }

  // What is there already, counted once.
  await sql`
    insert into session_log_counts (organization_id, workspace_id, status, n)
    select organization_id, w.workspace_id, status, count(*)
    from session_logs cross join lateral (values (session_logs.workspace_id), (${sql.raw(EVERY_WORKSPACE)})) as w(workspace_id) group by 1, 2, 3`.execute(db)
  await sql`
    insert into session_log_day_counts (organization_id, workspace_id, day, status, n)
    select organization_id, w.workspace_id, (started_at at time zone 'UTC')::date, status, count(*)
    from session_logs cross join lateral (values (session_logs.workspace_id), (${sql.raw(EVERY_WORKSPACE)})) as w(workspace_id) group by 1, 2, 3, 4`.execute(db)
  await sql`
    insert into kanban_card_counts (pipeline_id, stage_id, tag, n)
    select pipeline_id, stage_id, t.tag, count(*)
    from kanban_cards cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag) group by 1, 2, 3`.execute(db)
  await sql`
    insert into kanban_card_sums (pipeline_id, stage_id, tag, field_id, total)
    select pipeline_id, stage_id, t.tag, v.key, sum(v.value::numeric)
    from kanban_cards cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag) cross join lateral jsonb_each(field_values) as v
    where jsonb_typeof(v.value) = 'number' group by 1, 2, 3, 4`.execute(db)

  // Sorting the organization's log by a column without an index sorts every row of it. The nullable
  // `finished_at` is ordered nulls last either way, so each direction has an index of its own.
  await sql`create index session_logs_organization_finished_idx on session_logs (organization_id, finished_at, id)`.execute(db)
  await sql`create index session_logs_organization_finished_desc_idx on session_logs (organization_id, finished_at desc nulls last, id desc)`.execute(db)
  await sql`create index session_logs_organization_expires_idx on session_logs (organization_id, expires_at, id)`.execute(db)

  // Card search within one pipeline: the pipeline's entries only, not every tenant's. (Not for
  // tags: a `(pipeline_id, tags)` GIN index looked cheap enough to the planner to replace the
  // ordered index for unfiltered deep pages, at 30 times their cost.)
  await sql`create extension if not exists btree_gin`.execute(db)
  await sql`create index kanban_cards_pipeline_search_idx on kanban_cards using gin (pipeline_id, search_text gin_trgm_ops)`.execute(db)
  await sql`drop index kanban_cards_search_idx`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index kanban_cards_search_idx on kanban_cards using gin (search_text gin_trgm_ops)`.execute(db)
  await sql`drop index kanban_cards_pipeline_search_idx`.execute(db)
  await sql`drop index session_logs_organization_expires_idx`.execute(db)
  await sql`drop index session_logs_organization_finished_desc_idx`.execute(db)
  await sql`drop index session_logs_organization_finished_idx`.execute(db)
  for (const table of ['session_logs', 'kanban_cards']) {
    for (const operation of ['insert', 'update', 'delete', 'truncate']) {
      await sql.raw(`drop trigger ${table}_count_${operation} on ${table}`).execute(db)
      await sql.raw(`drop function ${table}_count_${operation}()`).execute(db)
    }
  }
  await sql`drop table kanban_card_sums`.execute(db)
  await sql`drop table kanban_card_counts`.execute(db)
  await sql`drop table session_log_day_counts`.execute(db)
  await sql`drop table session_log_counts`.execute(db)
}
