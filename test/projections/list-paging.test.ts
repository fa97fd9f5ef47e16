import { randomUUID } from 'node:crypto'
import t from 'tap'
import { listCards } from '../../src/projections/cards.js'
import { SESSION_LOG_ORDER_COLUMNS, listSessionLogs, type SessionLogOrder } from '../../src/projections/session-logs.js'
import { reachableBackends } from '../helpers/storage.js'

// The list queries pick their plans for large tables (docs/performance.md, benchmark 5): a first page
// reads rows in index order, a later page picks its ids first, a page that is not full counts
// itself. Every page of every order must still be exactly the slice of the fully sorted list.

const ORGANIZATION = '11111111-1111-4111-8111-111111111111'
const OTHER_ORGANIZATION = '22222222-2222-4222-8222-222222222222'
const WORKSPACES = ['33333333-3333-4333-8333-333333333333', '44444444-4444-4444-8444-444444444444']
const OTHER_WORKSPACE = '99999999-9999-4999-8999-999999999999'
const FLOW = '55555555-5555-4555-8555-555555555555'
const PIPELINE = '66666666-6666-4666-8666-666666666666'
const STAGES = ['77777777-7777-4777-8777-777777777777', '88888888-8888-4888-8888-888888888888']

interface Log {
  id: string
  workspace_id: string
  organization_id: string
  status: string
  warnings: number
  external_id: string | null
  started_at: Date
  expires_at: Date
  finished_at: Date | null
}

const at = (minutes: number) => new Date(Date.UTC(2026, 4, 1, 12, 0) + minutes * 60_000)

function makeLogs(): Log[] {
  const logs: Log[] = []
  for (let i = 0; i < 61; i++) {
    // Few distinct times, statuses and ids: ties everywhere, broken by id.
    const finished = i % 4 === 0 ? null : at((i % 5) * 10 + 3)
    const other = i % 13 === 12
    logs.push({
      id: randomUUID(),
      workspace_id: other ? OTHER_WORKSPACE : WORKSPACES[i % 2]!,
      organization_id: other ? OTHER_ORGANIZATION : ORGANIZATION,
      status: finished === null ? 'running' : ['completed', 'timeout', 'error'][i % 3]!,
      warnings: i % 3,
      external_id: i % 6 === 0 ? null : `c${i % 4}`,
      started_at: at(i % 7),
      expires_at: at(600 + (i % 3)),
      finished_at: finished,
    })
  }
  return logs
}

/** Reference order: the column, nulls last in either direction, then id, in the same direction. */
function sortLogs(logs: Log[], column: keyof Log, direction: 'ASC' | 'DESC'): Log[] {
  const sign = direction === 'DESC' ? -1 : 1
  const cmp = (a: unknown, b: unknown) => {
    const x = a instanceof Date ? a.getTime() : a
    const y = b instanceof Date ? b.getTime() : b
    return x! < y! ? -1 : x! > y! ? 1 : 0
  }
  return [...logs].sort((a, b) => {
    const x = a[column]
    const y = b[column]
    if (x === null || y === null) {
      if (x === null && y === null) return sign * cmp(a.id, b.id)
      return x === null ? 1 : -1
    }
    return sign * cmp(x, y) || sign * cmp(a.id, b.id)
  })
}

for (const backend of reachableBackends) {
  t.test(`list paging on ${backend.name}`, async (t) => {
    const { db } = await backend.open(t)
    const logs = makeLogs()
    await db
      .insertInto('workspaces')
      .values([
        ...WORKSPACES.map((id, i) => ({ id, organization_id: ORGANIZATION, name: `w${i}`, timezone: null, created_at: at(0) })),
        { id: OTHER_WORKSPACE, organization_id: OTHER_ORGANIZATION, name: 'other', timezone: null, created_at: at(0) },
      ])
      .execute()
    await db.insertInto('session_logs').values(logs.map((l) => ({ ...l, flow_id: FLOW, flow_version: 1 }))).execute()

    await t.test('session logs: every page of every order and filter is the slice of the sorted list', async (t) => {
      const filters: { name: string; where: (l: Log) => boolean; query: { workspaceId?: string; status?: 'running' | 'completed' } }[] = [
        { name: 'none', where: () => true, query: {} },
        { name: 'workspace', where: (l) => l.workspace_id === WORKSPACES[1], query: { workspaceId: WORKSPACES[1] } },
        { name: 'status', where: (l) => l.status === 'running', query: { status: 'running' } },
        { name: 'workspace and status', where: (l) => l.workspace_id === WORKSPACES[0] && l.status === 'completed', query: { workspaceId: WORKSPACES[0], status: 'completed' } },
      ]
      for (const filter of filters) {
        for (const orderBy of Object.keys(SESSION_LOG_ORDER_COLUMNS) as SessionLogOrder[]) {
          for (const direction of ['ASC', 'DESC'] as const) {
            const expected = sortLogs(
              logs.filter((l) => l.organization_id === ORGANIZATION && filter.where(l)),
              SESSION_LOG_ORDER_COLUMNS[orderBy],
              direction,
            ).map((l) => l.id)
            for (const size of [7, 100]) {
              const pages = Math.ceil(expected.length / size) + 1
              for (let page = 0; page <= pages; page++) {
                const got = await listSessionLogs(db, { organizationId: ORGANIZATION, page, size, orderBy, direction, now: at(0), ...filter.query })
                const label = `${filter.name}, ${orderBy} ${direction}, size ${size}, page ${page}`
                t.same(got.content.map((e) => e.id), expected.slice(page * size, (page + 1) * size), label)
                t.equal(got.totalElements, expected.length, `${label}: total`)
              }
            }
          }
        }
      }
      const one = logs.find((l) => l.organization_id === ORGANIZATION)!
      const single = await listSessionLogs(db, { organizationId: ORGANIZATION, page: 0, size: 10, direction: 'ASC', now: at(0), sessionId: one.id })
      t.same([single.content.map((e) => e.id), single.totalElements], [[one.id], 1], 'one session')
      const past = await listSessionLogs(db, { organizationId: ORGANIZATION, page: 3, size: 10, direction: 'ASC', now: at(0), sessionId: one.id })
      t.same([past.content, past.totalElements], [[], 1], 'a page past the end still counts')
      const foreign = await listSessionLogs(db, { organizationId: ORGANIZATION, page: 0, size: 10, direction: 'ASC', now: at(0), workspaceId: OTHER_WORKSPACE })
      t.same([foreign.content, foreign.totalElements], [[], 0], "another organization's workspace shows nothing")
    })

    await t.test('cards: every page is the slice of the list oldest first, with the same totals and sums', async (t) => {
      const cards = Array.from({ length: 53 }, (_, i) => ({
        id: randomUUID(),
        pipeline_id: PIPELINE,
        workspace_id: WORKSPACES[0]!,
        stage_id: STAGES[i % 2]!,
        session_id: null,
        tags: i % 3 === 0 ? ['vip'] : [],
        field_values: JSON.stringify({ amount: i + 0.25, name: `Card ${i % 5}` }),
        created_at: at(i % 6),
        moved_at: at(i % 6),
      }))
      await db.insertInto('kanban_cards').values(cards).execute()
      const cases: { name: string; where: (c: (typeof cards)[number]) => boolean; query: { stageId?: string; tags?: string[]; q?: string } }[] = [
        { name: 'none', where: () => true, query: {} },
        { name: 'stage', where: (c) => c.stage_id === STAGES[1], query: { stageId: STAGES[1] } },
        { name: 'tag', where: (c) => c.tags.includes('vip'), query: { tags: ['vip'] } },
        { name: 'q', where: (c) => c.field_values.includes('Card 3'), query: { q: 'card 3' } },
      ]
      for (const c of cases) {
        const matching = cards.filter(c.where)
        const expected = [...matching].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1)).map((x) => x.id)
        const sum = matching.reduce((s, x) => s + (JSON.parse(x.field_values) as { amount: number }).amount, 0)
        for (const size of [5, 500]) {
          for (let page = 0; page <= Math.ceil(expected.length / size) + 1; page++) {
            const got = await listCards(db, { pipelineId: PIPELINE, sumFieldIds: ['amount'], page, size, ...c.query })
            const label = `${c.name}, size ${size}, page ${page}`
            t.same(got.content.map((x) => x.id), expected.slice(page * size, (page + 1) * size), label)
            t.equal(got.totalElements, expected.length, `${label}: total`)
            t.ok(Math.abs(got.aggregations.amount! - sum) < 1e-9, `${label}: sum`)
          }
        }
      }
    })
  })
}
