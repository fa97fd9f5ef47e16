import { sql, type Expression, type ExpressionBuilder, type Insertable, type SqlBool, type Transaction } from 'kysely'
import type { CardEvent, CardValues } from '../domain/card.js'
import type { PipelineEvent } from '../domain/pipeline.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { KanbanCardsTable } from '../store/tables/kanban-cards.js'
import { onePage, type Paging } from './paging.js'
import { ROWS_PER_STATEMENT, WritesInOrder, defineProjection, inChunks, insertInChunks, type TypedFold } from './projection.js'

/** A new card's row, as a batch's later events for the card left it. */
type NewCard = Omit<Insertable<KanbanCardsTable>, 'field_values'> & { field_values: CardValues }

/** What a batch's events change in a card that existed before it; absent fields stay. */
interface CardChange {
  id: string
  field_values?: CardValues
  tags?: string[]
  stage_id?: string
  moved_at?: string
}

const isCardEvent = (event: CardEvent | PipelineEvent): event is CardEvent =>
  event.type === 'CardCreated' || event.type === 'CardUpdated' || event.type === 'CardStageChanged' || event.type === 'CardDeleted'

/** Card events merged per card: each card is inserted, changed or deleted once. */
class CardWrites {
  private readonly inserts = new Map<string, NewCard>()
  private readonly changes = new Map<string, CardChange>()
  private readonly deletes = new Set<string>()

  add(event: CardEvent): void {
    switch (event.type) {
      case 'CardCreated': {
        const d = event.data
        const row = { id: d.cardId, pipeline_id: d.pipelineId, workspace_id: d.workspaceId, stage_id: d.stageId, session_id: d.sessionId, tags: d.tags, field_values: d.values, created_at: d.createdAt, moved_at: d.createdAt }
        this.inserts.set(d.cardId, row)
        break
      }
      case 'CardUpdated':
        this.change(event.data.cardId, { field_values: event.data.values, tags: event.data.tags })
        break
      case 'CardStageChanged':
        this.change(event.data.cardId, { stage_id: event.data.stageId, moved_at: event.data.movedAt })
        break
      case 'CardDeleted':
        this.inserts.delete(event.data.cardId)
        this.changes.delete(event.data.cardId)
        this.deletes.add(event.data.cardId)
        break
    }
  }

  get rowsHeld(): number {
    return this.inserts.size + this.changes.size + this.deletes.size
  }

  private change(id: string, fields: Omit<CardChange, 'id'>): void {
    const created = this.inserts.get(id)
    if (created) Object.assign(created, fields)
    else this.changes.set(id, { ...this.changes.get(id), ...fields, id })
  }

  /** A statement per kind of write (and ROWS_PER_STATEMENT); the kept totals' triggers then run once per statement too. */
  async write(trx: Transaction<Database>): Promise<void> {
    await inChunks(this.deletes, ROWS_PER_STATEMENT, (ids) => trx.deleteFrom('kanban_cards').where('id', 'in', ids).execute())
    await insertInChunks(
      [...this.inserts.values()].map((row) => ({ ...row, field_values: JSON.stringify(row.field_values) })),
      (rows) => trx.insertInto('kanban_cards').values(rows).onConflict((oc) => oc.column('id').doNothing()).execute(),
    )
    await inChunks(this.changes.values(), ROWS_PER_STATEMENT, (rows) =>
      sql`
        update kanban_cards as c set
          field_values = coalesce(v.field_values, c.field_values),
          tags = coalesce(v.tags, c.tags),
          stage_id = coalesce(v.stage_id, c.stage_id),
          moved_at = coalesce(v.moved_at, c.moved_at)
        from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
          as v(id uuid, field_values jsonb, tags text[], stage_id uuid, moved_at timestamptz)
        where c.id = v.id`.execute(trx),
    )
  }
}

type PipelineUpdated = Extract<PipelineEvent, { type: 'PipelineUpdated' }>['data']

/** Takes the pipeline's removed fields' values off every card of it that holds one. */
async function removeFieldValues(trx: Transaction<Database>, { pipelineId, removedFieldIds }: PipelineUpdated): Promise<void> {
  await trx
    .updateTable('kanban_cards')
    .set({ field_values: sql`field_values - ${removedFieldIds}::text[]` })
    .where('pipeline_id', '=', pipelineId)
    .where(sql<boolean>`field_values ?| ${removedFieldIds}::text[]`)
    .execute()
}

/**
 * Card events merged per card, in order: a pipeline change that removes fields ends a run of merged
 * writes, as it may change any card of its pipeline, and is written in its place between the runs before
 * and after it.
 */
class CardsFold implements TypedFold<CardEvent | PipelineEvent> {
  private readonly inOrder = new WritesInOrder(() => new CardWrites(), removeFieldValues)

  get rowsHeld(): number {
    return this.inOrder.rowsHeld
  }

  async add(_db: DbOrTrx, events: readonly { event: CardEvent | PipelineEvent }[]): Promise<void> {
    for (const { event } of events) {
      if (isCardEvent(event)) this.inOrder.merging().add(event)
      else if (event.type === 'PipelineUpdated' && event.data.removedFieldIds.length > 0) this.inOrder.addInPlace(event.data)
    }
  }

  write(trx: Transaction<Database>): Promise<void> {
    return this.inOrder.write(trx)
  }
}

export const cardsProjection = defineProjection<CardEvent | PipelineEvent>({
  name: 'kanban-cards',
  // Pipeline events too: a field removed from a pipeline takes its values off every card.
  streamPrefixes: ['card-', 'pipeline-'],
  // The totals are written by triggers on kanban_cards (migration 0013), in the same transaction.
  tables: ['kanban_cards', 'kanban_card_counts', 'kanban_card_sums'],
  fold: () => new CardsFold(),
})

/** A card as the API shows it (spec §2, Kanban card). */
export interface CardRecord {
  id: string
  pipelineId: string
  stageId: string
  sessionId: string | null
  tags: string[]
  values: CardValues
  createdAt: string
  movedAt: string
}

export const cardRecord = (card: {
  id: string
  pipelineId: string
  stageId: string
  sessionId: string | null
  tags: string[]
  values: CardValues
  createdAt: string | Date
  movedAt: string | Date
}): CardRecord => ({
  id: card.id,
  pipelineId: card.pipelineId,
  stageId: card.stageId,
  sessionId: card.sessionId,
  tags: card.tags,
  values: card.values,
  createdAt: new Date(card.createdAt).toISOString(),
  movedAt: new Date(card.movedAt).toISOString(),
})

const columns = ['id', 'pipeline_id', 'stage_id', 'session_id', 'tags', 'field_values', 'created_at', 'moved_at'] as const

const fromRow = (row: { id: string; pipeline_id: string; stage_id: string; session_id: string | null; tags: string[]; field_values: CardValues; created_at: Date; moved_at: Date }) =>
  cardRecord({
    id: row.id,
    pipelineId: row.pipeline_id,
    stageId: row.stage_id,
    sessionId: row.session_id,
    tags: row.tags,
    values: row.field_values,
    createdAt: row.created_at,
    movedAt: row.moved_at,
  })

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

export interface CardQuery extends Paging {
  pipelineId: string
  /** Number and currency fields: each gets the sum of its values over every card that matches. */
  sumFieldIds: readonly string[]
  stageId?: string
  /** Any part of any value, in any case. */
  q?: string
  /** Exclusive; an ISO 8601 instant. */
  createdAfter?: string
  /** A card matches when it has all of them. */
  tags?: readonly string[]
}

/** The index expression of migration 0017: each card's tags and search trigrams, keyed by its pipeline. */
const filterKeys = sql`(kanban_card_filter_keys(pipeline_id, tags, search_text) collate "C")`

/** Three letters or digits in a row: `q` has a trigram of its own to look up (migration 0017). */
const mayHaveTrigram = (q: string) => /[\p{L}\p{N}]{3}/u.test(q)

const containing = (text: string) => `%${escapeLike(text)}%`

/**
 * `search_text` contains `q` in any case. ILIKE lowers each text it reads, most of a search's time
 * per card; a plain LIKE of `q` as typed, in lower case, in upper case or capitalized finds most
 * matches without it. Each LIKE implies the ILIKE when its spelling lowers to what `q` does (not
 * so for an I in a Turkish collation), so the answer is the ILIKE's. ASCII only: beyond it, a
 * spelling's case may not map one to one.
 */
function containsText(eb: ExpressionBuilder<Database, 'kanban_cards'>, q: string): Expression<SqlBool> {
  const anyCase = eb('search_text', 'ilike', containing(q))
  if (!/^[\x20-\x7e]*$/.test(q)) return anyCase
  const lower = q.toLowerCase()
  const spellings = new Set([q, lower, q.toUpperCase(), lower.replace(/(^|[^a-z0-9])([a-z])/g, (_, before: string, letter: string) => before + letter.toUpperCase())])
  return eb.or([...[...spellings].map((spelling) => sql<SqlBool>`(lower(${spelling}::text) = lower(${q}::text) and search_text like ${containing(spelling)})`), anyCase])
}

/** The tag whose kept totals are exactly the query's ('' for every card), when kept totals cover it. */
function keptTotalsTag(query: CardQuery): string | undefined {
  if (query.createdAfter !== undefined || (query.q !== undefined && query.q !== '')) return undefined
  const tags = query.tags ?? []
  return tags.length === 0 ? '' : tags.length === 1 ? tags[0] : undefined
}

/** `totalElements` and `aggregations` from the counts and sums kept per stage and tag (migration 0013). */
async function keptTotals(db: DbOrTrx, query: CardQuery, tag: string): Promise<{ total: number; sums: Map<string, number> }> {
  let counts = db.selectFrom('kanban_card_counts').where('pipeline_id', '=', query.pipelineId).where('tag', '=', tag)
  let sums = db.selectFrom('kanban_card_sums').where('pipeline_id', '=', query.pipelineId).where('tag', '=', tag)
  if (query.stageId !== undefined) {
    counts = counts.where('stage_id', '=', query.stageId)
    sums = sums.where('stage_id', '=', query.stageId)
  }
  const [count, fieldSums] = await Promise.all([
    counts.select(sql<string | number | null>`sum(n)`.as('n')).executeTakeFirstOrThrow(),
    query.sumFieldIds.length === 0
      ? []
      : sums.where('field_id', 'in', query.sumFieldIds).select(['field_id', sql<string | number>`sum(total)`.as('total')]).groupBy('field_id').execute(),
  ])
  return { total: Number(count.n ?? 0), sums: new Map(fieldSums.map((row) => [row.field_id, Number(row.total)])) }
}

/**
 * Cards of one pipeline, oldest first, with the sums of numeric fields over all matching cards. A
 * page past the first picks its ids from the index alone and then reads only those rows (a deep
 * OFFSET otherwise fetches every skipped card from the table; docs/performance.md, benchmark 5).
 * The totals come from the kept counts and sums when the filters are a stage and at most one tag,
 * and are counted over the matching cards otherwise, which are then looked up by their pipeline's
 * keys for their tags and `q` (migration 0017).
 */
export async function listCards(db: DbOrTrx, query: CardQuery) {
  const tags = query.tags ?? []
  const q = query.q ?? ''
  const keptTag = keptTotalsTag(query)
  const keyed = keptTag === undefined && (tags.length > 0 || mayHaveTrigram(q))
  let matching = db.selectFrom('kanban_cards').where('pipeline_id', '=', query.pipelineId)
  if (query.stageId !== undefined) matching = matching.where('stage_id', '=', query.stageId)
  if (query.createdAfter !== undefined) matching = matching.where(sql<boolean>`created_at > ${query.createdAfter}::timestamptz`)
  // The tags' keys are the tags themselves; `q`'s only narrow the cards down to those that may contain it.
  if (keyed) matching = matching.where(sql<boolean>`${filterKeys} @> kanban_card_query_keys(${query.pipelineId}::uuid, ${tags}::text[], ${q}::text)`)
  else if (tags.length > 0) matching = matching.where(sql<boolean>`tags @> ${tags}::text[]`)
  if (q !== '') matching = matching.where((eb) => containsText(eb, q))
  const countedTotals = async () => {
    const row: Record<string, string | number | null> = await matching
      .select((eb) => [
        eb.fn.countAll<string | number>().as('total'),
        ...query.sumFieldIds.map((id, i) => sql<string | number | null>`sum((field_values ->> ${id})::numeric)`.as(`sum${i}`)),
      ])
      .executeTakeFirstOrThrow()
    return { total: Number(row.total), sums: new Map(query.sumFieldIds.map((id, i) => [id, Number(row[`sum${i}`] ?? 0)])) }
  }
  const [rows, totals] = await Promise.all([
    // Keyed cards are all read to be ordered: the page then reads its own rows only.
    query.page === 0 && !keyed
      ? matching.select(columns).orderBy('created_at').orderBy('id').$call(onePage(query)).execute()
      : db
          .selectFrom('kanban_cards')
          .select(columns)
          .where('id', 'in', matching.select('id').orderBy('created_at').orderBy('id').$call(onePage(query)))
          .orderBy('created_at')
          .orderBy('id')
          .execute(),
    keptTag === undefined ? countedTotals() : keptTotals(db, query, keptTag),
  ])
  const aggregations = Object.fromEntries(query.sumFieldIds.map((id) => [id, totals.sums.get(id) ?? 0]))
  return { content: rows.map(fromRow), totalElements: totals.total, aggregations }
}

export async function findCard(db: DbOrTrx, query: { workspaceId: string; id: string }): Promise<CardRecord | undefined> {
  const row = await db.selectFrom('kanban_cards').select(columns).where('id', '=', query.id).where('workspace_id', '=', query.workspaceId).executeTakeFirst()
  return row && fromRow(row)
}

/** Which of `stageIds` (of one pipeline) hold at least one card. */
export async function stagesHoldingCards(db: DbOrTrx, pipelineId: string, stageIds: readonly string[]): Promise<string[]> {
  if (stageIds.length === 0) return []
  const { rows } = await sql<{ id: string }>`
    select s.id from unnest(${stageIds}::uuid[]) as s(id)
    where exists (select 1 from kanban_cards c where c.pipeline_id = ${pipelineId} and c.stage_id = s.id)`.execute(db)
  return rows.map((row) => row.id)
}
