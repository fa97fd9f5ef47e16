import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { START } from '../../src/eventstore/port.js'
import { createTestDatabase, postgresBackend, postgresUrl } from '../helpers/storage.js'
import { eventStoreContract } from './contract.js'

// The contract on PGlite runs in pglite.test.ts; these need a real Postgres (DATABASE_URL).
if (postgresUrl) {
  t.test('event store contract on postgres', async (t) => {
    eventStoreContract(t, async (t) => {
      const storage = await postgresBackend.open(t)
      const store = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 100 })
      t.teardown(() => store.close())
      return store
    })
  })

  t.test('gap rule: an event committed after an older open transaction stays unread until that transaction ends', async (t) => {
    const storage = await postgresBackend.open(t)
    const store = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    t.teardown(() => store.close())
    const slow = await storage.pool!.connect()
    t.teardown(() => slow.release())

    await slow.query('begin')
    await slow.query('select pg_current_xact_id()')
    await store.append('gap-fast', [{ id: randomUUID(), type: 'Fast', data: {} }], { expectedRevision: 'no_stream' })
    t.same(await store.readAll({ from: START, limit: 10 }), [], 'the later commit is held back behind the open transaction')

    await slow.query(`insert into streams (stream_id, revision) values ('gap-slow', 0)`)
    await slow.query(`insert into events (event_id, stream_id, stream_revision, event_type, data) values ($1, 'gap-slow', 0, 'Slow', '{}')`, [randomUUID()])
    await slow.query('commit')

    const events = await store.readAll({ from: START, limit: 10 })
    t.same(events.map((e) => e.type), ['Slow', 'Fast'], 'the older transaction comes first although its global position is larger')
    t.ok(events[0]!.position.prepare > events[1]!.position.prepare)
  })

  t.test('transactions that cannot append hold nothing back: other databases, projector connections', async (t) => {
    const storage = await postgresBackend.open(t)
    const store = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    t.teardown(() => store.close())
    const elsewhere = await createTestDatabase()
    t.teardown(() => elsewhere.drop())
    const otherDatabase = new pg.Client({ connectionString: elsewhere.url })
    await otherDatabase.connect()
    t.teardown(() => otherDatabase.end())
    await otherDatabase.query('begin')
    await otherDatabase.query('select pg_current_xact_id()')
    await storage.projectorDb.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx)
      await store.append('not-held', [{ id: randomUUID(), type: 'Seen', data: {} }], { expectedRevision: 'no_stream' })
      t.same((await store.readAll({ from: START, limit: 10 })).map((e) => e.type), ['Seen'], 'readable while both older transactions are still open')
    })
    await otherDatabase.query('rollback')
  })
} else {
  t.plan(0, 'Postgres event store suite not run: DATABASE_URL is not set')
}
