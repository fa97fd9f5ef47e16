import pg from 'pg'
import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import type { SwapBlocked } from '../../src/projections/swap-locks.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { silentLogger } from '../helpers/app.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { sessionsOn } from '../helpers/session-events.js'
import { reachableBackends } from '../helpers/storage.js'

// A reader that keeps a transaction open on a live table (an analyst's `begin; select …`, an idle
// client) holds a lock the swap needs. The swap waits for it only a moment per attempt, so readers
// arriving meanwhile are answered, tries again for as long as it takes, and names that connection.

/** Attempts after which the swap used to give the rebuild up: the blocker here outlasts them. */
const GAVE_UP_AFTER = 30

const waitUntil = async (check: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 800; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

async function client(url: string, applicationName: string): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url, application_name: applicationName })
  connection.on('error', () => {})
  await connection.connect()
  return connection
}

// The embedded database has one connection: no other transaction can hold its tables.
for (const backend of reachableBackends.filter((b) => b.name === 'postgres')) {
  t.test(`a swap beside a reader holding a transaction on the live table, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const url = (storage.target as { url: string }).url
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)
    for (let i = 0; i < 3; i++) await say(await startSession(), 'hello')
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await live.start()
    await waitUntil(async () => Object.keys(await deliveries()).length === 3, 'the live outbox applies the log')
    await live.stop()
    const before = await readModelRows(db, 'webhook_sessions')

    const analyst = await client(url, 'analyst-report')
    const reader = await client(url, 'api-reader')
    t.teardown(async () => {
      await analyst.end()
      await reader.end()
    })
    await analyst.query('begin')
    await analyst.query('select count(*) from webhook_sessions')
    const analystPid = (await analyst.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid

    const blocked: SwapBlocked[] = []
    let analystOpen = true
    let rebuilt = false
    const rebuilding = rebuildProjections(storage, store, [webhookOutboxProjection], {
      concurrency: 1,
      swapPacing: { lockTimeoutMs: 20, pauseMs: 20 },
      onSwapBlocked: (report) => blocked.push(report),
    }).finally(() => (rebuilt = true))

    await waitUntil(() => blocked.length > 0, 'the swap meets the open transaction')
    // Readers arriving while the swap tries: each is answered while the transaction is still open.
    let answered = 0
    for (let i = 0; i < 10; i++) {
      await reader.query('select count(*) from webhook_sessions')
      if (analystOpen) answered++
    }
    t.equal(answered, 10, 'every reader is answered while the blocking transaction stays open')

    await waitUntil(() => blocked.length > GAVE_UP_AFTER, 'the swap has tried for longer than it used to before giving up')
    t.notOk(rebuilt, 'the rebuild waits, its work kept')
    const holder = blocked.at(-1)!.holders.find((h) => h.pid === analystPid)
    t.ok(holder, 'the swap names the connection in its way')
    t.equal(holder?.applicationName, 'analyst-report', 'by its application name')
    t.equal(holder?.state, 'idle in transaction', 'and its state')
    t.ok(holder?.since instanceof Date, 'with when its transaction began')
    t.equal(blocked.at(-1)!.projection, webhookOutboxProjection.name, 'for the read model it swaps')

    await analyst.query('commit')
    analystOpen = false
    const rows = await rebuilding
    t.equal(rows.get(webhookOutboxProjection.name), 6, 'the rebuild completes once the transaction ends')
    t.same(await readModelRows(db, 'webhook_sessions'), before, 'with the rows of the log')
  })
}
