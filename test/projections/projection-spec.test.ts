import { Type } from '@sinclair/typebox'
import { sql, type Transaction } from 'kysely'
import t, { type Test } from 'tap'
import { Uuid } from '../../src/domain/schemas.js'
import { defineProjection } from '../../src/projections/projection.js'
import type { Database } from '../../src/store/database.js'
import { projectionSpec } from '../helpers/projection-spec.js'

// What the read-model spec kit holds every projection to, shown on small projections over the
// sectors table: each right, or wrong in one way.

type Named = { type: 'Named'; data: { id: string; name: string; at: string } }
const schemas = { Named: Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }), at: Type.String() }) }
const streamOf = (event: Named) => `sector-${event.data.id}`

const workspace = '0190a0b0-0000-7000-8000-000000000011'
const [a, b] = ['0190a0b0-0000-7000-8000-000000000801', '0190a0b0-0000-7000-8000-000000000802'] as const
const at = '2026-01-01T00:00:00.000Z'
const named = (id: string, name: string): Named => ({ type: 'Named', data: { id, name, at } })

/** A projection of `Named` events into the sectors table, written by `write`. */
const writing = (write: (trx: Transaction<Database>, data: Named['data']) => Promise<unknown>) =>
  defineProjection<Named>({ name: 'named', streamPrefixes: ['sector-'], tables: ['sectors'], apply: (trx, { data }) => write(trx, data).then(() => {}) })

const row = (data: Named['data']) => ({ id: data.id, workspace_id: workspace, organization_id: workspace, name: data.name, created_at: data.at, updated_at: data.at })
/** Upserts the sector's name: idempotent. */
const upserting = writing((trx, data) => trx.insertInto('sectors').values(row(data)).onConflict((oc) => oc.column('id').doUpdateSet({ name: data.name })).execute())
/** Inserts the sector again on a repeat: the second apply throws. */
const inserting = writing((trx, data) => trx.insertInto('sectors').values(row(data)).execute())
/** Stamps each apply with the clock: a repeat leaves another row than one apply. */
const stamping = writing((trx, data) =>
  trx
    .insertInto('sectors')
    .values({ ...row(data), updated_at: sql<string>`clock_timestamp()` })
    .onConflict((oc) => oc.column('id').doUpdateSet({ updated_at: sql<string>`clock_timestamp()` }))
    .execute(),
)

/** A tap test that records what the kit asserts instead of reporting it; the databases it opens close with `t`. */
function recorder(t: Test) {
  const outcomes: { ok: boolean; message: string; extra: Record<string, unknown> }[] = []
  const record = (ok: boolean) => (message: string, extra: Record<string, unknown> = {}) => outcomes.push({ ok, message, extra })
  return { test: { pass: record(true), fail: record(false), teardown: (fn: () => unknown) => t.teardown(fn) } as unknown as Test, outcomes }
}

t.test('a case passes or fails as one assertion named by its situation', async (t) => {
  const { test, outcomes } = recorder(t)
  const { given } = projectionSpec(test, upserting, { streamOf, schemas })
  await given(named(a, 'Sales'), named(a, 'Support')).then({ sectors: [{ id: a, name: 'Support', created_at: at }] }, 'the latest name')
  await given(named(a, 'Sales'), named(b, 'Support')).then({ sectors: [{ name: 'Support' }, { name: 'Sales' }] }, 'rows in any order')
  await given().then({ sectors: [] }, 'nothing given, no rows')
  await given(named(a, 'Sales')).then({ sectors: [{ id: a, name: 'Support' }] }, 'another name')
  await given(named(a, 'Sales'), named(b, 'Sales')).then({ sectors: [{ name: 'Sales' }] }, 'a row too many')
  await given(named(a, 'Sales')).then({ sectors: [] }, 'rows where none are expected')
  t.same(outcomes.map(({ ok, message }) => [ok, message.split(':')[0]]), [
    [true, 'the latest name'],
    [true, 'rows in any order'],
    [true, 'nothing given, no rows'],
    [false, 'another name'],
    [false, 'a row too many'],
    [false, 'rows where none are expected'],
  ])
  t.equal(outcomes[3]!.message, 'another name: given [Named]: sectors holds 1 row, 1 expected missing, 1 unexpected', 'a failure names the history and counts the rows')
  t.match(outcomes[3]!.extra, { missing: [/"name":"Support"/], unexpected: [/"name":"Sales"/] }, 'and shows the rows missing and unexpected')
  t.match(outcomes[3]!.extra.stack, /projection-spec\.test\.ts/, 'and points at the case, not at the kit')
  t.match(outcomes[4]!.extra, { missing: [], unexpected: [/"name":"Sales"/] })
})

t.test('a projection that is not idempotent fails every case that repeats what it breaks on', async (t) => {
  const { test, outcomes } = recorder(t)
  await projectionSpec(test, inserting, { streamOf, schemas }).given(named(a, 'Sales')).then({ sectors: [{ id: a, name: 'Sales' }] }, 'an insert repeated')
  await projectionSpec(test, stamping, { streamOf, schemas }).given(named(a, 'Sales')).then({ sectors: [{ id: a, name: 'Sales' }] }, 'a clock read on every apply')
  t.same(outcomes.map(({ ok }) => ok), [false, false])
  t.match(outcomes[0]!.message, /applying event 0 \(Named\) again threw/)
  t.match(outcomes[1]!.message, /applying each event twice leaves other rows in sectors than applying it once/, 'even where the case names no column that differs')
})

t.test('what the store or the runtime would never give fails the case', async (t) => {
  const { test, outcomes } = recorder(t)
  const { given } = projectionSpec(test, upserting, { streamOf, schemas })
  await given(named(a, '')).then({ sectors: [] }, 'an event its schema refuses')
  await given(named(a, 'Sales')).then({ flows: [] }, 'a table the projection does not write')
  await projectionSpec(test, upserting, { streamOf: (event: Named) => `flow-${event.data.id}`, schemas }).given(named(a, 'Sales')).then({ sectors: [] }, 'a stream it does not read')
  t.same(outcomes.map(({ ok }) => ok), [false, false, false])
  t.match(outcomes[0]!.message, /given event 0 \(Named\) fails: EventSchemaError/)
  t.match(outcomes[1]!.message, /named does not write flows/)
  t.match(outcomes[2]!.message, /given event 0 \(Named\) is on flow-.*, which named does not read/)
})

t.test('messages and rows hold generated strings escaped', async (t) => {
  const { test, outcomes } = recorder(t)
  const generated = 'a\u2028b\u2029c\nd\u0085e'
  await projectionSpec(test, upserting, { streamOf, schemas }).given(named(a, generated)).then({ sectors: [{ name: 'other' }] }, `a generated name ${generated}`)
  t.equal(outcomes.length, 1)
  t.notMatch(outcomes[0]!.message, /[\u2028\u2029\u0085\n]/u, 'no line or paragraph separator or control character in the message')
  t.match(outcomes[0]!.extra.unexpected, [/a\\u2028b\\u2029c/], 'the row it shows, escaped')
  t.notMatch(JSON.stringify(outcomes[0]!.extra.unexpected), /[\u2028\u2029\u0085]/u, 'nor in the rows it shows')
})
