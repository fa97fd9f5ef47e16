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

/** What the plain conditions find, oldest first, with the count and the sum. */
async function plain(db: Db, query: Omit<CardQuery, 'page' | 'size' | 'sumFieldIds'>) {
  let found = db.selectFrom('kanban_cards').where('pipeline_id', '=', query.pipelineId)
  if (query.stageId) found = found.where('stage_id', '=', query.stageId)
  if (query.createdAfter) found = found.where(sql<boolean>`created_at > ${query.createdAfter}::timestamptz`)
  if (query.tags?.length) found = found.where(sql<boolean>`tags @> ${query.tags}::text[]`)
  if (query.q) found = found.where(sql<boolean>`strpos(lower(search_text), lower(${query.q})) > 0`)
  const rows = await found.select(['id', sql<string | null>`field_values ->> 'amount'`.as('amount')]).orderBy('created_at').orderBy('id').execute()
  const sum = await found.select(sql<string | null>`sum((field_values ->> 'amount')::numeric)`.as('sum')).executeTakeFirstOrThrow()
  return { ids: rows.map((row) => row.id), sum: Number(sum.sum ?? 0) }
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
      const filters: Omit<CardQuery, 'page' | 'size' | 'sumFieldIds'>[] = []
      for (const pipelineId of PIPELINES) {
        for (const q of [undefined, ...QUERIES]) for (const tags of TAG_FILTERS) filters.push({ pipelineId, q, tags })
        for (const q of ['silva', 'ab', 'a', undefined]) {
          for (const tags of [['vip'], ['vip', 'renewal'], []]) {
            filters.push({ pipelineId, q, tags, stageId: STAGES[1] }, { pipelineId, q, tags, createdAfter: at(3).toISOString() })
          }
        }
      }
      for (const filter of filters) {
        const expected = await plain(db, filter)
        for (const [page, size] of [[0, 7], [1, 7], [0, 500]] as const) {
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
      t.equal(mismatches, 0, `all ${checked} pages, totals and sums are the plain conditions'`)
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
          const expected = await plain(db, { pipelineId: PIPELINES[0], q })
          const got = await listCards(db, { pipelineId: PIPELINES[0], q, sumFieldIds: ['amount'], page: 0, size: 500 })
          const ids = got.content.map((card) => card.id)
          if (!ids.includes(source.id)) throw new Error(`q ${assertionMessage(q)} did not find the card whose text is ${assertionMessage(source.text)}`)
          return got.totalElements === expected.ids.length && JSON.stringify(ids) === JSON.stringify(expected.ids)
        }),
        { numRuns: 150 },
      )
    })
  })
}
