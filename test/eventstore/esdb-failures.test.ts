import { createServer } from 'node:net'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { EsdbEventStore } from '../../src/eventstore/esdb.js'

// What needs no EventStoreDB server: a subscription that cannot reach one, and connection strings
// the client would refuse at start.

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

t.test('a subscription that keeps failing is reported each time, and waits longer each time', async (t) => {
  const reported: number[] = []
  const controller = new AbortController()
  const store = new EsdbEventStore({
    connectionString: `esdb://127.0.0.1:${await closedPort()}?tls=false`,
    reconnectDelayMs: 10,
    onSubscriptionError: (_error, retryInMs) => {
      reported.push(retryInMs)
      if (reported.length === 5) controller.abort()
    },
  })
  const batches: unknown[] = []
  for await (const batch of store.subscribeAll({ from: { commit: 0n, prepare: 0n }, signal: controller.signal })) batches.push(batch)
  t.same(batches, [], 'nothing delivered')
  t.same(reported, [10, 20, 40, 80, 160], 'every failure reported, the pause doubling')
})

t.test('EVENTSTORE_CONNECTION_STRING takes what the EventStoreDB client takes', async (t) => {
  for (const accepted of ['esdb://localhost:2113?tls=false', 'esdb+discover://cluster.example.com:2113']) {
    t.equal(loadConfig({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: accepted, DATABASE_URL: 'postgres://localhost/x' }).eventstoreConnectionString, accepted)
  }
  for (const refused of ['kurrentdb://localhost:2113', 'kurrentdb+discover://cluster.example.com:2113', 'https://localhost:2113']) {
    try {
      loadConfig({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: refused, DATABASE_URL: 'postgres://localhost/x' })
      t.fail(`${refused.split(':')[0]}: accepted`)
    } catch (error) {
      t.ok(error instanceof ConfigError && error.problems.some((p) => p.startsWith('EVENTSTORE_CONNECTION_STRING')), `${refused.split(':')[0]}: refused by name`)
    }
  }
})
