import t from 'tap'
import { EsdbEventStore } from '../../src/eventstore/esdb.js'
import type { EventStore } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { appOver } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'
import { freePort } from '../helpers/cli.js'

// /readyz of a service whose EventStoreDB subscriptions keep failing. No EventStoreDB server runs
// here: the store's answers to readiness (ping) come from an EventStoreDB store whose subscription
// cannot reach its server, the rest from the Postgres store.

const backend = reachableBackends[0]!

t.test(`readiness while an EventStoreDB subscription keeps failing, on ${backend.name}`, async (t) => {
  const storage = await backend.open(t)
  const postgres = new PostgresEventStore({ db: storage.db, pool: storage.pool })
  t.teardown(() => postgres.close())
  let failed!: () => void
  const failedThreeTimes = new Promise<void>((resolve) => (failed = resolve))
  let failures = 0
  const esdb = new EsdbEventStore({
    connectionString: `esdb://127.0.0.1:${await freePort()}?tls=false`,
    reconnectDelayMs: 5,
    onSubscriptionError: () => {
      if (++failures === 3) failed()
    },
  })
  t.teardown(() => esdb.close())
  const controller = new AbortController()
  const subscription = (async () => {
    for await (const _ of esdb.subscribeAll({ from: { commit: 0n, prepare: 0n }, signal: controller.signal }));
  })()
  t.teardown(async () => {
    controller.abort()
    await subscription
  })
  await failedThreeTimes

  const store: EventStore = Object.assign(Object.create(postgres) as EventStore, { kind: 'esdb' as const, ping: () => esdb.ping() })
  const app = await appOver(t, storage.db, store)

  const response = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(response.statusCode, 503, 'not ready')
  const body = response.json() as { message: string; checks: { name: string; ok: boolean; detail?: string }[] }
  t.match(body.message, /eventStore/, 'naming the event store')
  const check = body.checks.find((c) => c.name === 'eventStore')
  t.notOk(check?.ok, 'its check fails')
  t.match(check?.detail, /^EventStoreDB subscription failed \d+ times in a row: unavailable/, 'saying why')
})
