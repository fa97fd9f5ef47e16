import t from 'tap'
import { convertToCommandError } from '@eventstore/db-client'
import { ConfigError, loadConfig } from '../../src/config.js'
import { EsdbEventStore, SubscriptionHealth, esdbFailureKind, toPortError } from '../../src/eventstore/esdb.js'
import { EventStoreUnavailableError, WrongExpectedVersionError } from '../../src/eventstore/port.js'
import { isTransient } from '../../src/processors/failures.js'
import { freePort } from '../helpers/cli.js'

// What needs no EventStoreDB server: a subscription that cannot reach one, the connection strings
// the client takes, and what each of the client's errors means here. The errors are made by the
// client's own conversion from a gRPC answer shaped as a server sends it (status code and
// `exception` metadata); the contract suite (test/eventstore/esdb.test.ts, with
// EVENTSTORE_CONNECTION_STRING set) is the check against a real server.

/** gRPC status codes a server answers with. */
const { DEADLINE_EXCEEDED, NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION, UNAVAILABLE, UNAUTHENTICATED } = { DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, PERMISSION_DENIED: 7, FAILED_PRECONDITION: 9, UNAVAILABLE: 14, UNAUTHENTICATED: 16 }

/** A failed call as the client gets it from the server, converted by the client. */
const serverAnswer = (code: number, metadata: Record<string, string> = {}): unknown =>
  convertToCommandError(Object.assign(new Error(`${code}: answer`), { code, details: 'answer', metadata: { getMap: () => metadata } }) as never)

t.test('a subscription that keeps failing is reported each time, waits longer each time, and makes the store not ready', async (t) => {
  const reported: { retryInMs: number; permanent: boolean }[] = []
  const controller = new AbortController()
  const store = new EsdbEventStore({
    connectionString: `esdb://127.0.0.1:${await freePort()}?tls=false`,
    reconnectDelayMs: 10,
    onSubscriptionError: (_error, failure) => {
      reported.push(failure)
      if (reported.length === 5) {
        // Told of the failure once the store counts it.
        pingWhileFailing = store.ping().catch((error: unknown) => error)
        controller.abort()
      }
    },
  })
  t.teardown(() => store.close())
  let events = 0
  let pingWhileFailing: Promise<unknown> | undefined
  for await (const batch of store.subscribeAll({ from: { commit: 0n, prepare: 0n }, signal: controller.signal })) events += batch.events.length
  t.equal(events, 0, 'nothing delivered')
  t.same(reported.map((failure) => failure.retryInMs), [10, 20, 40, 80, 160], 'every failure reported, the pause doubling')
  t.ok(reported.every((failure) => !failure.permanent), 'an unreachable server is a transient failure')
  t.match(await pingWhileFailing, { message: /^EventStoreDB subscription failed 5 times in a row: unavailable/ }, 'ping fails while it keeps failing, saying why (readiness shows it)')
  const pingAfter = await store.ping().catch((error: unknown) => error)
  t.ok(pingAfter instanceof EventStoreUnavailableError, 'once it has ended, ping says only that the server is away')
})

t.test('the store is not ready while a subscription is refused, or has failed three times in a row', async (t) => {
  const health = new SubscriptionHealth()
  const refused = {}
  const flaky = {}
  health.failed(flaky, serverAnswer(UNAVAILABLE), 2, false)
  t.equal(health.problem(), undefined, 'two transient failures: still ready')
  health.failed(flaky, serverAnswer(UNAVAILABLE), 3, false)
  t.match(health.problem(), /^subscription failed 3 times in a row: unavailable: 14: answer$/, 'the third: not ready, with the error')
  health.recovered(flaky)
  t.equal(health.problem(), undefined, 'subscribed again: ready')
  health.failed(refused, serverAnswer(PERMISSION_DENIED, { exception: 'access-denied' }), 1, true)
  t.match(health.problem(), /^subscription refused: access-denied: 7: answer$/, 'access denied: not ready at once')
  health.recovered(refused)
  t.equal(health.problem(), undefined)
})

t.test("the client's errors, as the service takes them", async (t) => {
  const conflict = serverAnswer(FAILED_PRECONDITION, { exception: 'wrong-expected-version', 'stream-name': 'card-1', 'expected-version': '3', 'actual-version': '5' })
  const cases: [string, unknown, string][] = [
    ['wrong expected version', conflict, 'conflict'],
    ['stream not found', serverAnswer(NOT_FOUND, { exception: 'stream-not-found', 'stream-name': 'card-1' }), 'stream_not_found'],
    ['access denied', serverAnswer(PERMISSION_DENIED, { exception: 'access-denied' }), 'permanent'],
    ['bad credentials', serverAnswer(UNAUTHENTICATED), 'permanent'],
    ['not the leader', serverAnswer(NOT_FOUND, { exception: 'not-leader', 'leader-endpoint-host': 'node2', 'leader-endpoint-port': '2113' }), 'permanent'],
    ['unavailable', serverAnswer(UNAVAILABLE), 'transient'],
    ['deadline exceeded', serverAnswer(DEADLINE_EXCEEDED), 'transient'],
    ['anything else', new Error('something else'), 'other'],
  ]
  for (const [name, error, kind] of cases) t.equal(esdbFailureKind(error), kind, name)

  const mapped = toPortError(conflict, { stream: 'card-1', expectedRevision: 3n })
  t.ok(mapped instanceof WrongExpectedVersionError, 'a conflict on append is the port conflict')
  t.match(mapped, { stream: 'card-1', expected: 3n, actual: 5n }, 'with the revisions')
  const unavailable = toPortError(serverAnswer(UNAVAILABLE))
  t.ok(unavailable instanceof EventStoreUnavailableError && isTransient(unavailable), 'an unreachable server is transient to the processors (retried, never parking a stream)')
  t.notOk(isTransient(toPortError(serverAnswer(PERMISSION_DENIED, { exception: 'access-denied' }))), 'access denied is not transient')
})

const configWith = (connectionString: string) =>
  loadConfig({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: connectionString, DATABASE_URL: 'postgres://localhost/x' })

const refusal = (connectionString: string): string | undefined => {
  try {
    configWith(connectionString)
    return undefined
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return error.problems.find((problem) => problem.startsWith('EVENTSTORE_CONNECTION_STRING'))
  }
}

t.test('EVENTSTORE_CONNECTION_STRING takes what the EventStoreDB client takes', async (t) => {
  const accepted = [
    'esdb://localhost:2113?tls=false',
    'esdb+discover://cluster.example.com:2113',
    'esdb://admin:changeit@node1:2113,node2:2113,node3:2113?tls=true&nodePreference=leader',
    'esdb+discover://flowd:s3cret@cluster.example.com:2113?tlsCAFile=/etc/eventstore/ca.crt&keepAliveTimeout=10000',
  ]
  for (const [i, connectionString] of accepted.entries()) t.equal(configWith(connectionString).eventstoreConnectionString, connectionString, `accepted form ${i + 1}`)
})

t.test('a connection string the client would refuse is refused at start, saying where and why, without echoing it', async (t) => {
  const refused: [string, RegExp][] = [
    ['kurrentdb://localhost:2113', /kurrentdb:\/\/ is for @kurrent\/kurrentdb-client/],
    ['kurrentdb+discover://cluster.example.com:2113', /kurrentdb:\/\/ is for @kurrent\/kurrentdb-client/],
    ['https://localhost:2113', /at position 0, expected esdb:\/\/ or esdb\+discover:\/\//],
    ['esdb://localhost:2113?tls=maybe', /at position 26, expected true or false/],
    ['esdb://admin:hunter2@localhost:port', /expected port number/],
  ]
  for (const [connectionString, reason] of refused) {
    const scheme = connectionString.split(':')[0]
    const problem = refusal(connectionString)
    t.match(problem, reason, `${scheme}: refused with the reason`)
    t.notOk(problem?.includes('hunter2'), `${scheme}: the password is not echoed`)
  }
})
