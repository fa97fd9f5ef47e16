import { sql } from 'kysely'
import t from 'tap'
import { sessionStream } from '../../src/domain/session.js'
import { analyticsCardStaysProjection } from '../../src/projections/analytics-card-stays.js'
import { analyticsModelCallsProjection } from '../../src/projections/analytics-model-calls.js'
import { analyticsSessionsProjection } from '../../src/projections/analytics-sessions.js'
import { analyticsTransfersProjection } from '../../src/projections/analytics-transfers.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'

// A preview (the editor's test panel) runs on the real engine, but it is not a conversation of the
// workspace: it writes no analytics row, live or rebuilt. A session of the published flow, beside it,
// shows the read models did catch up.

const ANALYTICS_PROJECTIONS = [analyticsSessionsProjection, analyticsTransfersProjection, analyticsCardStaysProjection, analyticsModelCallsProjection]

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Transfers to the sector at once, in the session's first turn. */
const transferAtOnce = (sectorId: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'human', type: 'transfer', position: { x: 200, y: 0 }, data: { targetType: 'sector', targetId: sectorId } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'human' }],
})

/** Waits until the engine has answered the session's start and every analytics projection applied it. */
async function settled(test: TestApp, call: (method: 'GET' | 'POST', url: string) => Promise<any>, sessionId: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await call('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0) break
    await sleep(25)
  }
  const events = await test.store.readStream(sessionStream(sessionId))
  if (!events.some((e) => e.type === 'TurnCompleted')) throw new Error(`session ${sessionId} has no turn`)
  if (!(await test.readModels.waitFor(sessionStream(sessionId), events.at(-1)!.position, { timeoutMs: 20_000 }))) throw new Error('the read models did not catch up')
}

/** Per analytics table and view, the rows that name `sessionId`. */
async function rowsNaming(test: TestApp, sessionId: string): Promise<Record<string, number>> {
  const views = await sql<{ name: string }>`select table_name as name from information_schema.views where table_schema = 'analytics' order by 1`.execute(test.storage.db)
  const tables = ANALYTICS_PROJECTIONS.flatMap((p) => p.tables.map((table) => `public.${table}`))
  const counts: Record<string, number> = {}
  for (const relation of [...tables, ...views.rows.map((view) => `analytics.${view.name}`)]) {
    const { rows } = await sql<{ n: number }>`select count(*)::integer as n from ${sql.raw(relation)} as r where to_jsonb(r)::text like ${`%${sessionId}%`}`.execute(test.storage.db)
    counts[relation] = Number(rows[0]!.n)
  }
  return counts
}

for (const backend of reachableBackends) {
  t.test(`a preview session that transfers writes no analytics row (${backend.name})`, async (t) => {
    const test = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await test.app.inject({ method, url, headers: { 'x-api-key': test.admin.apiKey }, ...(payload ? { payload } : {}) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.body ? response.json() : { id: String(response.headers.location).split('/').at(-1) }
    }
    const sector = await call('POST', '/v1/sectors', { name: 'Sales' })
    const flow = await call('POST', '/v1/flows', { name: 'Straight to sales', definition: transferAtOnce(sector.id) })

    const preview = (await call('POST', `/v1/flows/${flow.id}/preview-sessions`, {})).sessionId
    const real = (await call('POST', `/v1/sessions/flows/${flow.id}/create`, {})).sessionId
    await settled(test, call, preview)
    await settled(test, call, real)

    const transfersOf = async (sessionId: string) =>
      Number((await sql<{ n: number }>`select count(*)::integer as n from analytics_transfers where session_id = ${sessionId}`.execute(test.storage.db)).rows[0]!.n)
    t.equal(await transfersOf(real), 1, "the published flow's session has its transfer")
    t.equal(await transfersOf(preview), 0, 'the preview has none')
    const nonzero = (counts: Record<string, number>) => Object.entries(counts).filter(([, n]) => n > 0).map(([relation]) => relation)
    t.same(nonzero(await rowsNaming(test, preview)), [], 'no analytics table or view names the preview')
    t.ok(nonzero(await rowsNaming(test, real)).includes('analytics.transfers'), 'the analytics views show the published session')

    for (const projection of ANALYTICS_PROJECTIONS) await rebuildProjection(test.storage, test.store, projection)
    t.same(nonzero(await rowsNaming(test, preview)), [], 'nor after a rebuild')
    t.equal(await transfersOf(real), 1, "the session's transfer is rebuilt")
  })
}
