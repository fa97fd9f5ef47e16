import { sql, type Kysely, type RawBuilder } from 'kysely'
import t from 'tap'
import { analyticsCardStaysProjection } from '../../src/projections/analytics-card-stays.js'
import { analyticsModelCallsProjection } from '../../src/projections/analytics-model-calls.js'
import { analyticsSessionsProjection } from '../../src/projections/analytics-sessions.js'
import { analyticsTransfersProjection } from '../../src/projections/analytics-transfers.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import type { Database } from '../../src/store/database.js'
import { reachableBackends } from '../helpers/storage.js'
import { NOW, buildDataSet } from './data-set.js'

const ANALYTICS_PROJECTIONS = [analyticsSessionsProjection, analyticsTransfersProjection, analyticsCardStaysProjection, analyticsModelCallsProjection]

/**
 * What the database's clock, not the events, puts in a view: a stay still open lasts until today
 * (`now()`), its `last_day`, and the days after the data set's last one on which it is counted. Left
 * out, so that a midnight passing between the two snapshots changes nothing that is compared.
 */
const CLOCK_BOUND: Record<string, RawBuilder<{ row: string }>> = {
  'analytics.card_stage_stays': sql<{ row: string }>`select (to_jsonb(r) - case when r.left_at is null then 'last_day' else '' end)::text as row from analytics.card_stage_stays as r`,
  'analytics.cards_per_stage_day': sql<{ row: string }>`select row_to_json(r)::text as row from analytics.cards_per_stage_day as r where r.day <= ${NOW.toISOString().slice(0, 10)}::date`,
}

/** Every analytics table and view, each row as Postgres renders it in JSON, in a stable order. */
async function snapshot(db: Kysely<Database>): Promise<Record<string, string[]>> {
  const views = await sql<{ name: string }>`select table_name as name from information_schema.views where table_schema = 'analytics' order by 1`.execute(db)
  const relations = [...ANALYTICS_PROJECTIONS.flatMap((p) => p.tables.map((table) => `public.${table}`)), ...views.rows.map((view) => `analytics.${view.name}`)]
  const snap: Record<string, string[]> = {}
  for (const relation of relations) {
    const query = CLOCK_BOUND[relation] ?? sql<{ row: string }>`select row_to_json(r)::text as row from ${sql.raw(relation)} as r`
    const { rows } = await query.execute(db)
    snap[relation] = rows.map((r) => r.row).sort()
  }
  return snap
}

for (const backend of reachableBackends) {
  t.test(`rebuilding the analytics read models reproduces every row (${backend.name})`, async (t) => {
    const { test } = await buildDataSet(t, backend)
    const before = await snapshot(test.storage.db)
    t.equal(Object.keys(before).length, 5 + 11, 'five tables and eleven views')
    for (const [relation, rows] of Object.entries(before)) t.ok(rows.length > 0, `${relation} has rows to compare`)

    // The live runtime may replay a stretch itself; either way the tables were emptied first.
    for (const projection of ANALYTICS_PROJECTIONS) await rebuildProjection(test.storage, test.store, projection)
    t.same(await snapshot(test.storage.db), before, 'the same rows after the rebuild')
  })
}
