import t from 'tap'
import { EsdbEventStore } from '../../src/eventstore/esdb.js'
import { eventStoreContract } from './contract.js'

// No EventStoreDB server runs in development or CI here; with one (`docker compose up eventstore`)
// set EVENTSTORE_CONNECTION_STRING=esdb://localhost:2113?tls=false and this file runs the suite.
const connectionString = process.env.EVENTSTORE_CONNECTION_STRING

if (connectionString) {
  t.test('event store contract on EventStoreDB', async (t) => {
    eventStoreContract(t, async (t) => {
      const store = new EsdbEventStore({ connectionString })
      t.teardown(() => store.close())
      return store
    })
  })
} else {
  t.test('event store contract on EventStoreDB', { skip: 'EVENTSTORE_CONNECTION_STRING is not set' }, () => {})
}
