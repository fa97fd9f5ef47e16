import { sql, type Kysely } from 'kysely'

// Card lists filtered by several tags or by `q` (docs/performance.md, benchmark 5): one GIN index
// whose keys are each card's tags and search trigrams, each key carrying the card's pipeline. A
// filter then reads postings of its own pipeline only, where the tag index and the trigram index
// (`kanban_cards_pipeline_search_idx`, which this replaces) hold every tenant's cards under each tag
// and trigram, so that a filter of one pipeline had to intersect posting lists of the whole table.
//
// Keys: '@<pipeline>' on every card; '#<tag><pipeline>' per tag; '<trigram><pipeline>' per pg_trgm
// trigram of `search_text` (show_trgm: lower case, per word). The pipeline's text (36 characters)
// ends every key, so no two kinds or pipelines share one. The pipeline comes last so that sorting
// the keys compares their varying part first. In the "C" collation: the keys are compared, never
// shown. One index for both kinds: a filter's tags and trigrams are then one scan of it; with one
// index each, the planner read one and computed the other's keys on every card it found.
export async function up(db: Kysely<any>): Promise<void> {
  // Named with its schema: an index's function runs under other search paths too (a restore's).
  const { rows } = await sql<{ schema: string }>`select quote_ident(n.nspname) as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)
  const showTrgm = sql.raw(`${rows[0]!.schema}.show_trgm`)
  await sql`
    create function kanban_card_filter_keys(pipeline_id uuid, tags text[], search_text text) returns text[]
    language sql immutable parallel safe
    as $$
      select string_to_array('@' || p || coalesce(',' || nullif(array_to_string(${showTrgm}(search_text), p || ','), '') || p, ''), ',')
          || array(select '#' || t || p from unnest(tags) as t)
      from (select pipeline_id::text) as pipeline(p)
    $$`.execute(db)
  // The keys that every card of the pipeline with all of `tags` and `q` in its search text has:
  // the tags', and the trigrams that lie inside `q` (of each window of three characters, the one
  // trigram that neither of its two-character halves has: none when the window holds a word
  // boundary). A card whose text contains `q` in any case has each of them, as pg_trgm cuts and
  // lowers the card's words the same way; a card with all of them may still not contain `q`, so the
  // filter stays. With neither, '@<pipeline>' alone: every card of the pipeline.
  await sql`
    create function kanban_card_query_keys(pipeline_id uuid, tags text[], q text) returns text[]
    language sql immutable parallel safe
    as $$
      select coalesce(nullif(
               array(select '#' || t || p from unnest(tags) as t)
                 || array(
                   select distinct w.trigram || p
                   from generate_series(1, length(q) - 2) as i, unnest(${showTrgm}(substr(q, i, 3))) as w(trigram)
                   where w.trigram <> all (${showTrgm}(substr(q, i, 2)) || ${showTrgm}(substr(q, i + 1, 2)))),
               '{}'), array['@' || p])
      from (select pipeline_id::text) as pipeline(p)
    $$`.execute(db)
  await sql`create index kanban_cards_filter_keys_idx on kanban_cards using gin ((kanban_card_filter_keys(pipeline_id, tags, search_text) collate "C"))`.execute(db)
  await sql`drop index kanban_cards_pipeline_search_idx`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index kanban_cards_pipeline_search_idx on kanban_cards using gin (pipeline_id, search_text gin_trgm_ops)`.execute(db)
  await sql`drop index kanban_cards_filter_keys_idx`.execute(db)
  await sql`drop function kanban_card_query_keys(uuid, text[], text)`.execute(db)
  await sql`drop function kanban_card_filter_keys(uuid, text[], text)`.execute(db)
}
