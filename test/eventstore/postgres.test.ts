import { randomUUID } from 'node:crypto'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { START, positionToString } from '../../src/eventstore/port.js'
import { WakeUp } from '../../src/eventstore/wake-up.js'
import type { Database } from '../../src/store/database.js'
import { createTestDatabase, postgresBackend, postgresUrl, separatePool } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'
import { assertGroupCommit, eventStoreContract } from './contract.js'

// The contract on PGlite runs in pglite.test.ts; these need a real Postgres (DATABASE_URL).
if (postgresUrl) {
  t.test('event store contract on postgres', async (t) => {
    // One database for the contract's tests: each writes streams of its own (see eventStoreContract).
    const storage = await postgresBackend.open(t)
    eventStoreContract(t, async (t) => {
      const store = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 100 })
      t.teardown(() => store.close())
      return store
    })
  })

  t.test('appends that arrive while two are written go together as the next write, one transaction', async (t) => {
    const storage = await postgresBackend.open(t)
    const store = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    t.teardown(() => store.close())
    await assertGroupCommit(t, store)
  })

  t.test('a refused append costs one statement more: the revision found and the check for a repeat go together', async (t) => {
    const storage = await postgresBackend.open(t)
    const statements: string[] = []
    const countingPool = new Proxy(storage.pool!, {
      get(target, property, receiver) {
        if (property === 'query') {
          return (config: { name?: string }, ...rest: unknown[]) => {
            statements.push(config.name ?? 'unnamed')
            return (target.query as (...args: unknown[]) => unknown)(config, ...rest)
          }
        }
        const value = Reflect.get(target, property, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const viaKysely: string[] = []
    const db = storage.db.withPlugin({ transformQuery: (args) => (viaKysely.push(args.node.kind), args.node), transformResult: async (args) => args.result })
    const store = new PostgresEventStore({ db, pool: countingPool })
    t.teardown(() => store.close())
    const event = () => ({ id: randomUUID(), type: 'Counted', data: {} })
    await store.append('refused-1', [event(), event()], { expectedRevision: 'no_stream' })
    statements.length = 0

    const refused = await store.append('refused-1', [event()], { expectedRevision: 0n }).catch((error: unknown) => error)
    t.match(refused, { name: 'WrongExpectedVersionError', expected: 0n, actual: 1n }, 'refused, with the revision found')
    t.same(statements, ['flowd_append_one_exact', 'flowd_appended_already'], 'the append, then one statement')
    t.same(viaKysely, [], 'nothing else')
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
    t.same((await store.headPositions([{}, { streamPrefixes: ['gap-'] }])).map(positionToString), [START, START].map(positionToString), 'and so are the heads')

    await slow.query(`insert into streams (stream_id, revision) values ('gap-slow', 0)`)
    await slow.query(`insert into events (event_id, stream_id, stream_revision, event_type, data) values ($1, 'gap-slow', 0, 'Slow', '{}')`, [randomUUID()])
    await slow.query('commit')

    const events = await store.readAll({ from: START, limit: 10 })
    t.same(events.map((e) => e.type), ['Slow', 'Fast'], 'the older transaction comes first although its global position is larger')
    t.ok(events[0]!.position.prepare > events[1]!.position.prepare)
  })

  t.test('transactions that cannot append hold nothing back: other databases, projector and dispatcher connections', async (t) => {
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
    await storage.dispatcherDb.transaction().execute(async (dispatcherTrx) => {
      await sql`select pg_current_xact_id()`.execute(dispatcherTrx)
      await storage.projectorDb.transaction().execute(async (trx) => {
        await sql`select pg_current_xact_id()`.execute(trx)
        await store.append('not-held', [{ id: randomUUID(), type: 'Seen', data: {} }], { expectedRevision: 'no_stream' })
        t.same((await store.readAll({ from: START, limit: 10 })).map((e) => e.type), ['Seen'], 'readable while the three older transactions are still open')
      })
    })
    await otherDatabase.query('rollback')
  })

  t.test('a burst of appends is announced to another process: its subscriber, which never polls, gets every event', async (t) => {
    const storage = await postgresBackend.open(t)
    const writer = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    // Another process: its own pool, and a poll interval longer than the test may run, so only NOTIFY wakes it.
    const otherPool = separatePool({ connectionString: (storage.target as { url: string }).url, max: 4 })
    const otherDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: otherPool }) })
    const follower = new PostgresEventStore({ db: otherDb, pool: otherPool, pollIntervalMs: 3_600_000 })
    const controller = new AbortController()
    t.teardown(async () => {
      controller.abort()
      await follower.close()
      await writer.close()
      await otherDb.destroy()
    })
    const burst = 40
    const seen: string[] = []
    const following = (async () => {
      for await (const batch of follower.subscribeAll({ from: START, signal: controller.signal })) {
        seen.push(...batch.events.map((e) => e.stream))
        if (seen.length >= burst) controller.abort()
      }
    })()
    // The follower LISTENs once it has caught up and waits at the tail.
    const listening = async () =>
      (await storage.pool!.query("select 1 from pg_stat_activity where datname = current_database() and query = 'listen flowd_events'")).rowCount! > 0
    while (!(await listening())) await new Promise((resolve) => setTimeout(resolve, 20))

    // Back to back, so that most announcements are coalesced: the last append must still be announced.
    for (let i = 0; i < burst; i++) await writer.append(`burst-${i}`, [{ id: randomUUID(), type: 'Burst', data: { i } }], { expectedRevision: 'no_stream' })
    await following
    t.same(seen, Array.from({ length: burst }, (_, i) => `burst-${i}`))
  })

  t.test('NOTIFY is sent only while another process listens', async (t) => {
    const storage = await postgresBackend.open(t)
    const channel = 'flowd_test_alone'
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const alone = new WakeUp(channel, storage.pool, { listenersRecheckMs: 50 })
    // A plain connection counts what is sent; it is not named as a listener, so it is nobody.
    const observer = new pg.Client({ connectionString: (storage.target as { url: string }).url })
    observer.on('error', () => {})
    await observer.connect()
    let heard = 0
    const markers = new Map<string, () => void>()
    observer.on('notification', (message) => {
      const arrived = markers.get(message.payload ?? '')
      if (arrived) arrived()
      else heard++
    })
    await observer.query(`listen ${channel}`)
    const otherPool = separatePool({ connectionString: (storage.target as { url: string }).url, max: 2 })
    const other = new WakeUp(channel, otherPool)
    t.teardown(async () => {
      await alone.close()
      await other.close()
      await otherPool.end()
      await observer.end()
    })
    /**
     * Everything `alone` has sent is heard: its NOTIFYs are committed, then a marker is, and
     * Postgres hands a listener notifications in commit order.
     */
    const drained = async () => {
      await alone.flush()
      const marker = randomUUID()
      const arrived = new Promise<void>((resolve) => markers.set(marker, resolve))
      await storage.pool!.query('select pg_notify($1, $2)', [channel, marker])
      await arrived
      markers.delete(marker)
    }
    // Its own listener does not count as another process.
    void alone.wait(1)
    const listeners = async () =>
      Number((await storage.pool!.query(`select count(*) as n from pg_stat_activity where application_name = 'flowd-listen:${channel}'`)).rows[0].n)
    while ((await listeners()) < 1) await sleep(10)

    alone.announce()
    await drained()
    t.equal(heard, 1, 'before anyone was looked for: sent, to be safe')
    // Until its first look at the listeners answers, it goes on sending; the look has answered once a round is silent.
    await eventually('an announcement that sends nothing', async () => {
      heard = 0
      alone.announce()
      await drained()
      return heard === 0 ? true : undefined
    })
    // Spread over several looks at the listeners, each answering that nobody else listens.
    for (let i = 0; i < 10; i++) {
      alone.announce()
      await sleep(20)
    }
    await drained()
    t.equal(heard, 0, 'nobody else listens: nothing sent')

    const woken = other.wait(10_000, undefined, other.wakeUpCount)
    while ((await listeners()) < 2) await sleep(10)
    const announcing = setInterval(() => alone.announce(), 20)
    const wasWoken = await woken.finally(() => clearInterval(announcing))
    t.equal(wasWoken, true, 'another process listens: a later look finds it, and it is woken')
    await drained()
    t.ok(heard > 0, 'and the notifications are sent')
  })
} else {
  t.test('the event store on Postgres', { skip: 'DATABASE_URL is not set' }, () => {})
}
