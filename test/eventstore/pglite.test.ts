import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { pgliteBackend } from '../helpers/storage.js'
import { eventStoreContract } from './contract.js'

t.test('event store contract on PGlite', async (t) => {
  eventStoreContract(t, async (t) => {
    const storage = await pgliteBackend.open(t)
    const store = new PostgresEventStore({ db: storage.db, pollIntervalMs: 100 })
    t.teardown(() => store.close())
    return store
  })
})
