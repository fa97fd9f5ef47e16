import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { sql } from 'kysely'
import t from 'tap'
import { listCards, type CardQuery } from '../../src/projections/cards.js'
import type { Db } from '../../src/store/database.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { reachableBackends } from '../helpers/storage.js'

// Card lists filtered by tags or `q` look the cards up by keys of their own pipeline (migration
// 0017). Whatever the text (case, accents, other scripts, punctuation, a `q` across words or of a
// word's middle), they must find exactly the cards the plain conditions find (`tags @>`, `ilike`),
// with the same pages, totals and sums.

const PIPELINES = [randomUUID(), randomUUID()] as const
const WORKSPACE = randomUUID()
const STAGES = [randomUUID(), randomUUID()] as const
const at = (minutes: number) => new Date(Date.UTC(2026, 4, 1, 12, 0) + minutes * 60_000)

const PHRASES = [
  'Silva Alimentos Ltda.',
  'SILVA & filhos',
  'silvana',
  'Alimentação São Paulo',
  'AÇÃO social',
  'École ÉCOLE',
  'Straße 12',
  'BX-12',
  'bx-123',
  '12.50',
  'x-1',
  '100% off',
  'a_b',
  'back\\slash',
  "O'Neil",
  'Ñandú',
  'İstanbul',
  'ǅemal',
  'ΣΊΣΥΦΟΣ σίσυφος',
  '日本語テキスト',
  'emoji 🙂 ok',
  'tab\tsep',
  'dup dup dup',
  'ab',
]
const TAGS = ['vip', 'renewal', 'lead', 'VIP', 'São', '#hash', '@at', 'a b', 'ç']
const QUERIES = [
  'silva', 'ILV', 'lva Al', 'a Al', 'ação', 'AÇÃO', 'são p', 'straße', 'STRASSE', 'cole', 'bx-1', 'x-1', '-12', '2.5', '100%', '%', '_', 'a_b',
  '\\', 'k\\s', "o'n", 'ñandú', 'istanbul', 'İst', 'σίσυφος', 'ΣΊΣ', '本語', '🙂', 'i ok', 'ab', 'a', 'dup dup', ' ', 'nothing like it',
]
const TAG_FILTERS = [[], ['vip'], ['vip', 'renewal'], ['VIP'], ['#hash', '@at'], ['a b', 'ç'], ['São'], ['nobody']]

interface Card {
  id: string
  pipeline_id: string
  workspace_id: string
  stage_id: string
  session_id: null
  tags: string[]
  field_values: string
  created_at: Date
  moved_at: Date
}

function makeCards(): Card[] {
  return Array.from({ length: 160 }, (_, i) => {
    const values: Record<string, string | number | boolean> = { name: `${PHRASES[i % PHRASES.length]} ${PHRASES[(i * 7 + 3) % PHRASES.length]}` }
    if (i % 4 !== 0) values.amount = Math.round(i * 1234.567) / 100
    if (i % 5 === 0) values.note = PHRASES[(i * 3) % PHRASES.length]!.toUpperCase()
    if (i % 6 === 0) values.flag = true
    return {
      id: randomUUID(),
      pipeline_id: PIPELINES[i % 5 === 4 ? 1 : 0],
      workspace_id: WORKSPACE,
      stage_id: STAGES[i % 2]!,
      session_id: null,
      tags: TAGS.filter((_, k) => ((i * 13) >> k) % 3 === 0),
      field_values: JSON.stringify(values),
      created_at: at(i % 9),
      moved_at: at(i % 9),
    }
  })
}

/**
 * `c` in upper or lower case, or as it is where that case is not one character lowering back to
 * `c`'s own (ß, İ, final ς): a text in any case then still lowers to the text's lower case.
 */
function inCase(c: string, upper: boolean): string {
  const other = upper ? c.toUpperCase() : c.toLowerCase()
  return [...other].length === 1 && other.toLowerCase() === c.toLowerCase() ? other : c
}

type Filter = Omit<CardQuery, 'page' | 'size' | 'sumFieldIds'>

/** What the plain conditions find for each filter, oldest first, with the sum: all filters in one query. */
async function plain(db: Db, filters: readonly Filter[]): Promise<{ ids: string[]; sum: number }[]> {
  const rows = sql.join(
    filters.map(
      (filter, i) =>
        sql`(${i}::int, ${filter.pipelineId}::uuid, ${filter.stageId ?? null}::uuid, ${filter.createdAfter ?? null}::timestamptz, ${filter.tags?.length ? filter.tags : null}::text[], ${filter.q || null}::text)`,
    ),
  )
  const found = await sql<{ filter: number; ids: string[]; sum: string | null }>`
    select f.filter, coalesce(array_agg(c.id::text order by c.created_at, c.id) filter (where c.id is not null), '{}') as ids, sum((c.field_values ->> 'amount')::numeric)::text as sum
    from (values ${rows}) as f(filter, pipeline_id, stage_id, created_after, tags, q)
    left join kanban_cards c on c.pipeline_id = f.pipeline_id
      and (f.stage_id is null or c.stage_id = f.stage_id)
      and (f.created_after is null or c.created_at > f.created_after)
      and (f.tags is null or c.tags @> f.tags)
      and (f.q is null or strpos(lower(c.search_text), lower(f.q)) > 0)
    group by f.filter
    order by f.filter`.execute(db)
  return found.rows.map((row) => ({ ids: row.ids, sum: Number(row.sum ?? 0) }))
}

for (const backend of reachableBackends) {
  t.test(`card filters by keys on ${backend.name}`, async (t) => {
    const { db } = await backend.open(t)
    const cards = makeCards()
    await db.insertInto('kanban_cards').values(cards).execute()

    await t.test('the query keys: the trigrams inside q, the tags, or the whole pipeline', async (t) => {
      const keys = async (tags: string[], q: string) =>
        (await sql<{ keys: string[] }>`select kanban_card_query_keys(${PIPELINES[0]}::uuid, ${tags}::text[], ${q}::text) as keys`.execute(db)).rows[0]!.keys.map((k) => k.slice(0, -36)).sort()
      t.same(await keys([], 'Silva'), ['ilv', 'lva', 'sil'], 'no trigram of a word boundary: q may lie inside longer words')
      t.same(await keys(['vip'], 'lva Al'), ['#vip', 'lva'], 'none across words either')
      t.same(await keys([], 'ab'), ['@'], 'too short: every card of the pipeline')
      t.same(await keys([], 'a-b c'), ['@'], 'no three word characters in a row')
    })

    await t.test('every filter finds what the plain conditions find', async (t) => {
      let checked = 0
      let mismatches = 0
      // Each filter is asked for all its cards on one page, and for page 0 or page 1 of 7 cards,
      // alternating like a chessboard's squares over the texts and the tag filters: each text and
      // each tag filter is asked for both pages.
      const filters: (Filter & { firstPages: 0 | 1 })[] = []
      for (const pipelineId of PIPELINES) {
        for (const [i, q] of [undefined, ...QUERIES].entries()) for (const [k, tags] of TAG_FILTERS.entries()) filters.push({ pipelineId, q, tags, firstPages: ((i + k) % 2) as 0 | 1 })
        for (const [i, q] of ['silva', 'ab', 'a', undefined].entries()) {
          for (const [k, tags] of [['vip'], ['vip', 'renewal'], []].entries()) {
            filters.push({ pipelineId, q, tags, stageId: STAGES[1], firstPages: ((i + k) % 2) as 0 | 1 }, { pipelineId, q, tags, createdAfter: at(3).toISOString(), firstPages: ((i + k + 1) % 2) as 0 | 1 })
          }
        }
      }
      const expectations = await plain(db, filters)
      for (const [index, { firstPages, ...filter }] of filters.entries()) {
        const expected = expectations[index]!
        // Page 0 of 7 holds the whole of a list of 7 cards or fewer, read as page 0 of 500 would read it.
        const pages = firstPages === 0 && expected.ids.length <= 7 ? ([[0, 7]] as const) : ([[firstPages, 7], [0, 500]] as const)
        for (const [page, size] of pages) {
          const got = await listCards(db, { ...filter, sumFieldIds: ['amount'], page, size })
          checked++
          const ids = got.content.map((card) => card.id)
          if (
            JSON.stringify(ids) !== JSON.stringify(expected.ids.slice(page * size, (page + 1) * size)) ||
            got.totalElements !== expected.ids.length ||
            Math.abs((got.aggregations.amount ?? 0) - expected.sum) > 1e-6
          ) {
            mismatches++
            t.fail(`${assertionMessage(filter)} page ${page} of ${size}`, { found: { ids, total: got.totalElements, sum: got.aggregations.amount }, wanted: { ids: expected.ids.slice(page * size, (page + 1) * size), total: expected.ids.length, sum: expected.sum } })
          }
        }
      }
      t.equal(mismatches, 0, `all ${checked} pages, totals and sums of ${filters.length} filters are the plain conditions'`)
    })

    await t.test('any part of any text, in any case, finds its card', async () => {
      const sources = cards
        .filter((card) => card.pipeline_id === PIPELINES[0])
        .flatMap((card) => Object.values(JSON.parse(card.field_values) as Record<string, unknown>).flatMap((value) => (typeof value === 'string' || typeof value === 'number' ? [{ id: card.id, text: String(value) }] : [])))
      await fc.assert(
        fc.asyncProperty(fc.nat(), fc.integer({ min: 1, max: 12 }), fc.nat(), fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }), async (which, length, start, flips) => {
          const source = sources[which % sources.length]!
          const text = [...source.text]
          const from = start % text.length
          const q = text.slice(from, from + length).map((c, i) => inCase(c, flips[i % flips.length]!)).join('')
          const [expected] = await plain(db, [{ pipelineId: PIPELINES[0], q }])
          const got = await listCards(db, { pipelineId: PIPELINES[0], q, sumFieldIds: ['amount'], page: 0, size: 500 })
          const ids = got.content.map((card) => card.id)
          if (!ids.includes(source.id)) throw new Error(`q ${assertionMessage(q)} did not find the card whose text is ${assertionMessage(source.text)}`)
          return got.totalElements === expected!.ids.length && JSON.stringify(ids) === JSON.stringify(expected!.ids)
        }),
        { numRuns: 150 },
      )
    })
  })
}
