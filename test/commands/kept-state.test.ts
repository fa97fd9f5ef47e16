import t from 'tap'
import { handleCommand } from '../../src/commands/handle.js'
import { messageKey, session, sessionStream } from '../../src/domain/session.js'
import { ConflictError } from '../../src/errors.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import type { EventStore } from '../../src/eventstore/port.js'
import { newId } from '../../src/ids.js'
import { countingReads } from '../helpers/counting-reads.js'
import { reachableBackends } from '../helpers/storage.js'

// A send decides on the session state its process kept and appends at that revision without reading
// the stream; the expected revision refuses it when another process wrote meanwhile. Two stores on
// one database stand for two processes: each keeps its own states.

const metadata = { actor: 'test' }
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, seconds)).toISOString()

for (const backend of reachableBackends) {
  t.test(`sends decided on kept session states, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { store: here, counted } = countingReads(new PostgresEventStore({ db: storage.db, pool: storage.pool }))
    const elsewhere = new PostgresEventStore({ db: storage.db, pool: storage.pool })
    t.teardown(async () => {
      await here.close()
      await elsewhere.close()
    })
    const workspaceId = newId()
    const sessionId = newId()
    const stream = sessionStream(sessionId)
    const send = (store: EventStore, body: string, now: string, idempotencyKey: string | null = null) =>
      handleCommand(store, session, stream, {
        type: 'ReceiveMessage',
        data: { sessionId, workspaceId, messageId: newId(), message: { type: 'text', text: { body } }, idempotencyKey, now },
      }, metadata)
    await handleCommand(here, session, stream, {
      type: 'StartSession',
      data: { sessionId, workspaceId, organizationId: newId(), flowId: newId(), flowVersion: 1, variables: {}, externalId: null, apiKeyId: newId(), callbackUrl: null, ttlSeconds: 60, messageId: newId(), now: at(0) },
    }, metadata)

    await t.test('sends after this process\'s own writes read nothing', async (t) => {
      counted.reads = 0
      for (const [i, body] of ['one', 'two', 'three'].entries()) {
        const result = await send(here, body, at(1 + i))
        t.equal(result.events.length, 1)
      }
      t.equal(counted.reads, 0, 'three sends, no read of the stream')
    })

    await t.test('a write by another process costs one refused append and one read, and nothing is lost', async (t) => {
      await send(elsewhere, 'from elsewhere', at(5))
      counted.reads = 0
      const result = await send(here, 'four', at(6))
      t.equal(result.events.length, 1)
      t.equal(counted.reads, 1, 'read once, after the expected revision refused the kept state')
      const bodies = (await here.readStream(stream)).filter((e) => e.type === 'MessageReceived').map((e) => (e.data as { message: { text: { body: string } } }).message.text.body)
      t.same(bodies, ['one', 'two', 'three', 'from elsewhere', 'four'])
    })

    await t.test('a refusal decided on a kept state is checked on a fresh read', async (t) => {
      // Kept here: the last message at 0:06 moved the expiry to 1:06. Elsewhere a message at 1:00 moves it to 2:00.
      await send(elsewhere, 'keeps it alive', at(60))
      const result = await send(here, 'after the old expiry', at(90))
      t.equal(result.events.length, 1, 'accepted: the kept state alone would have said the session expired at 1:06')
      await t.rejects(send(here, 'too late', at(200)), ConflictError, 'and a session that did expire is refused')
    })

    await t.test('one Idempotency-Key through two processes makes one message', async (t) => {
      const first = await send(elsewhere, 'once', at(100), 'key-1')
      const again = await send(here, 'once', at(101), 'key-1')
      t.equal(first.events.length, 1)
      t.equal(again.events.length, 0, 'the repeat appends nothing')
      t.equal(again.state.status !== 'none' && again.state.idempotencyKeys[messageKey('key-1')], first.state.status !== 'none' && first.state.idempotencyKeys[messageKey('key-1')], 'and answers the first message')
    })
  })
}
