import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import t from 'tap'
import { START } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { completeAbandonedDeferred, completeDeferred, deferKeptCounts, deferSecondaryIndexes, RebuildRunningError, rebuildLeaseName } from '../../src/projections/deferred-indexes.js'
import type { Projection } from '../../src/projections/projection.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { openStorage } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { silentLogger } from '../helpers/app.js'
import { createTestDatabase, postgresBackend, postgresUrl, reachableBackends } from '../helpers/storage.js'

/** The indexes of the test's table, by name, with PostgreSQL's definition of each. */
const indexesOf = async (db: Kysely<Database>) => {
  const { rows } = await sql<{ name: string; definition: string }>`
    select indexname as name, indexdef as definition from pg_indexes where tablename = 'ticks' order by indexname`.execute(db)
  return rows
}

const deferred = async (db: Kysely<Database>) => (await db.selectFrom('projection_deferred_indexes').select(['index_name', 'projection']).execute()).map((r) => r.index_name)

async function setUp(db: Kysely<Database>) {
  await sql`create table ticks (event_id uuid primary key, i int not null, stream text not null)`.execute(db)
  await sql`create index ticks_i_idx on ticks (i)`.execute(db)
  await sql`create index ticks_stream_idx on ticks (stream, i desc) where i >= 0`.execute(db)
  await sql`create unique index ticks_stream_i_key on ticks (stream, i)`.execute(db)
  return indexesOf(db)
}

/** Records, for each event it applies, which of the table's indexes exist at that moment. */
function observingProjection(seen: Set<string>, failAt?: number): Projection {
  let applied = 0
  return {
    name: 'ticks',
    streamPrefixes: ['tick-'],
    tables: ['ticks' as keyof Database & string],
    async apply(trx, event) {
      if (++applied === failAt) throw new Error(`cannot apply tick ${failAt}`)
      const { rows } = await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'ticks'`.execute(trx)
      for (const row of rows) seen.add(row.name)
      const { i } = event.data as { i: number }
      await sql`insert into ticks (event_id, i, stream) values (${event.id}, ${i}, ${event.stream}) on conflict do nothing`.execute(trx)
    },
  }
}

const appendTicks = async (store: PostgresEventStore, count: number) => {
  for (let i = 0; i < count; i++) await store.append(`tick-${i % 3}`, [{ id: randomUUID(), type: 'Ticked', data: { i } }], { expectedRevision: 'any' })
}

for (const backend of reachableBackends) {
  t.test(`deferred indexes on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const indexes = await setUp(db)
    const store = new PostgresEventStore({ db, pool: storage.pool })
    t.teardown(() => store.close())
    await appendTicks(store, 30)

    await t.test('a rebuild replays without the secondary indexes and builds them again as they were', async (t) => {
      const seen = new Set<string>()
      const rebuilt = await rebuildProjections(db, store, [observingProjection(seen)], { concurrency: 1, batchSize: 7 })
      t.equal(rebuilt.get('ticks'), 30)
      t.same([...seen].sort(), ['ticks_pkey', 'ticks_stream_i_key'], 'only the unique indexes were there during the replay')
      t.same(await indexesOf(db), indexes, 'every index is back, with its definition')
      t.same(await deferred(db), [], 'nothing is left deferred')
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ticks where i >= 0`.execute(db)
      t.equal(rows[0]!.n, 30)
    })

    await t.test('a rebuild that fails builds the indexes again for the runtime that goes on', async (t) => {
      await t.rejects(rebuildProjections(db, store, [observingProjection(new Set(), 12)], { concurrency: 1, batchSize: 5 }), /cannot apply tick 12/)
      t.same(await indexesOf(db), indexes)
      t.same(await deferred(db), [])
    })

    await t.test('indexes a rebuild dropped and never built are built by the next process to start', async (t) => {
      await db.transaction().execute((trx) => deferSecondaryIndexes(trx, observingProjection(new Set())))
      t.same((await indexesOf(db)).map((i) => i.name), ['ticks_pkey', 'ticks_stream_i_key'], 'the interrupted rebuild left the table without them')
      t.same((await deferred(db)).sort(), ['ticks_i_idx', 'ticks_stream_idx'])
      await completeAbandonedDeferred(db, undefined, silentLogger)
      t.same(await indexesOf(db), indexes)
      t.same(await deferred(db), [])
    })
  })
}

/** Writes each tick as a card of one pipeline, and notes whether the totals' triggers were on for it. */
function cardsOfTicks(pipelineId: string, triggersSeen: Set<string>): Projection {
  const stages = [randomUUID(), randomUUID()]
  return {
    name: 'cards-of-ticks',
    streamPrefixes: ['tick-'],
    tables: ['kanban_cards'],
    async apply(trx, event) {
      triggersSeen.add(await countTriggersState(trx))
      const { i } = event.data as { i: number }
      await trx
        .insertInto('kanban_cards')
        .values({ id: event.id, pipeline_id: pipelineId, workspace_id: pipelineId, stage_id: stages[i % 2]!, session_id: null, tags: i % 3 === 0 ? ['vip'] : [], field_values: JSON.stringify({ amount: i }), created_at: event.createdAt, moved_at: event.createdAt })
        .execute()
    },
  }
}

/** 'on' or 'off': the state of kanban_cards' triggers for its totals (all three alike, or 'mixed'). */
async function countTriggersState(db: Kysely<Database> | Transaction<Database>): Promise<string> {
  const { rows } = await sql<{ enabled: string }>`
    select distinct tgenabled as enabled from pg_trigger
    where tgrelid = 'kanban_cards'::regclass and tgname in ('kanban_cards_count_insert', 'kanban_cards_count_update', 'kanban_cards_count_delete')`.execute(db)
  return rows.length !== 1 ? 'mixed' : rows[0]!.enabled === 'D' ? 'off' : 'on'
}

/** The kept totals of a pipeline, and the same counted from its cards. */
async function keptAndCounted(db: Kysely<Database>, pipelineId: string) {
  const kept = await sql<{ stage_id: string; tag: string; n: string; total: string }>`
    select c.stage_id, c.tag, c.n::text, s.total::text from kanban_card_counts c
    join kanban_card_sums s using (pipeline_id, stage_id, tag) where c.pipeline_id = ${pipelineId} and s.field_id = 'amount' order by 1, 2`.execute(db)
  const counted = await sql<{ stage_id: string; tag: string; n: string; total: string }>`
    select stage_id, t.tag, count(*)::text as n, sum((field_values->>'amount')::numeric)::text as total
    from kanban_cards cross join lateral (select distinct unnest(array['']::text[] || tags)) as t(tag)
    where pipeline_id = ${pipelineId} group by 1, 2 order by 1, 2`.execute(db)
  return { kept: kept.rows, counted: counted.rows }
}

for (const backend of reachableBackends) {
  t.test(`deferred totals on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool })
    t.teardown(() => store.close())
    await appendTicks(store, 30)

    await t.test('a rebuild replays with the totals triggers off and counts the totals once at the end', async (t) => {
      const pipelineId = randomUUID()
      const seen = new Set<string>()
      const projection = cardsOfTicks(pipelineId, seen)
      const rebuilt = await rebuildProjections(db, store, [projection], { concurrency: 1, batchSize: 7, windowEvents: 7 })
      t.equal(rebuilt.get('cards-of-ticks'), 30)
      t.same([...seen], ['off'], 'the triggers were off for every write of the replay')
      t.equal(await countTriggersState(db), 'on', 'and are on again')
      const { kept, counted } = await keptAndCounted(db, pipelineId)
      t.equal(counted.length, 4, 'two stages, each with and without the tag')
      t.same(kept, counted, 'the totals are those of the rows')
      t.same(await db.selectFrom('projection_deferred_counts').selectAll().execute(), [], 'nothing is left deferred')
      const [, tick] = await store.readAll({ from: START, limit: 2 })
      await db.transaction().execute((trx) => projection.apply(trx, { ...tick!, id: randomUUID() }))
      const after = await keptAndCounted(db, pipelineId)
      t.not(after.counted, counted)
      t.same(after.kept, after.counted, 'a later write is counted by the triggers again')
    })

    await t.test('totals a rebuild left off are counted by the next process to start', async (t) => {
      const pipelineId = randomUUID()
      const projection = cardsOfTicks(pipelineId, new Set())
      await db.transaction().execute((trx) => deferKeptCounts(trx, projection))
      const ticks = await store.readAll({ from: START, limit: 10 })
      await db.transaction().execute(async (trx) => {
        for (const tick of ticks) await projection.apply(trx, { ...tick, id: randomUUID() })
      })
      t.equal(await countTriggersState(db), 'off', 'the interrupted rebuild left the triggers off')
      t.same((await keptAndCounted(db, pipelineId)).kept, [], 'and its rows uncounted')
      await completeAbandonedDeferred(db, undefined, silentLogger)
      t.equal(await countTriggersState(db), 'on')
      const { kept, counted } = await keptAndCounted(db, pipelineId)
      t.equal(counted.length, 4)
      t.same(kept, counted)
    })
  })
}

t.test('cards written while a rebuild counts its totals and builds its indexes are each counted once', { skip: postgresUrl ? false : 'DATABASE_URL is not set: needs PostgreSQL (writers on connections of their own)' }, async (t) => {
  const storage = await postgresBackend.open(t)
  const { db } = storage
  const store = new PostgresEventStore({ db, pool: storage.pool })
  t.teardown(() => store.close())
  await appendTicks(store, 60)
  const ticks = await store.readAll({ from: START, limit: 60 })
  const pipelineId = randomUUID()
  const projection = cardsOfTicks(pipelineId, new Set())
  const writeCard = (i: number) => db.transaction().execute((trx) => projection.apply(trx, { ...ticks[i % ticks.length]!, id: randomUUID() }))

  // Each round: the end of a rebuild, with the service writing cards all the while. A card written
  // between the count and the triggers' return would be in neither.
  for (let round = 1; round <= 5; round++) {
    await db.transaction().execute(async (trx) => {
      await deferSecondaryIndexes(trx, projection)
      await deferKeptCounts(trx, projection)
    })
    for (let i = 0; i < ticks.length; i++) await writeCard(i)
    let writing = true
    let written = 0
    const writers = [0, 1, 2].map(async () => {
      while (writing) await writeCard(written++)
    })
    const { counted, built } = await completeDeferred(db, projection.name)
    writing = false
    await Promise.all(writers)
    t.same(counted, ['kanban_cards'])
    t.equal(built.length, 4, `round ${round}: the four secondary indexes of the cards are built`)
    t.ok(written > 0, `round ${round}: cards were written meanwhile (${written})`)
    const totals = await keptAndCounted(db, pipelineId)
    t.same(totals.kept, totals.counted, `round ${round}: the totals are those of the rows`)
  }
})

t.test('on a shared Postgres, one process rebuilds a read model at a time', { skip: postgresUrl ? false : 'DATABASE_URL is not set: needs PostgreSQL (advisory locks across processes)' }, async (t) => {
  const database = await createTestDatabase()
  const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 })
  const mine = new AdvisoryLeases(database.url, silentLogger)
  const otherProcess = new AdvisoryLeases(database.url, silentLogger)
  t.teardown(async () => {
    await mine.close()
    await otherProcess.close()
    await storage.close()
    await database.drop()
  })
  await migrateToLatest(storage.db)
  const { db } = storage
  const indexes = await setUp(db)
  const store = new PostgresEventStore({ db, pool: storage.pool })
  t.teardown(() => store.close())
  await appendTicks(store, 10)

  const running = await otherProcess.tryAcquire(rebuildLeaseName('ticks'))
  t.ok(running, 'the other process is rebuilding')
  await db.transaction().execute((trx) => deferSecondaryIndexes(trx, observingProjection(new Set())))
  await t.rejects(rebuildProjections(db, store, [observingProjection(new Set())], { concurrency: 1, leases: mine }), RebuildRunningError)
  await completeAbandonedDeferred(db, mine, silentLogger)
  t.same((await deferred(db)).sort(), ['ticks_i_idx', 'ticks_stream_idx'], 'a starting process leaves a running rebuild its own indexes to build')

  await running!.release()
  await completeAbandonedDeferred(db, mine, silentLogger)
  t.same(await indexesOf(db), indexes, 'once that rebuild is gone, they are built')
  const rebuilt = await rebuildProjections(db, store, [observingProjection(new Set())], { concurrency: 1, leases: mine })
  t.equal(rebuilt.get('ticks'), 10, 'and the read model can be rebuilt')
  t.ok(await otherProcess.tryAcquire(rebuildLeaseName('ticks')), 'the rebuild let its lease go')
})
