import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { pgliteBackend } from '../helpers/storage.js'
import { assertGroupCommit, eventStoreContract } from './contract.js'

t.test('event store contract on PGlite', async (t) => {
  // One database for the contract's tests: each writes streams of its own (see eventStoreContract).
  const storage = await pgliteBackend.open(t)
  eventStoreContract(t, async (t) => {
    const store = new PostgresEventStore({ db: storage.db, pollIntervalMs: 100 })
    t.teardown(() => store.close())
    return store
  })
})

t.test('appends that arrive while two are written go together as the next write, one transaction', async (t) => {
  const storage = await pgliteBackend.open(t)
  const store = new PostgresEventStore({ db: storage.db })
  t.teardown(() => store.close())
  await assertGroupCommit(t, store)
})
