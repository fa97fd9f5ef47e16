import { sql } from 'kysely'
import t from 'tap'
import { cardStream } from '../../src/domain/card.js'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { comparePositions } from '../../src/eventstore/port.js'
import { listParked } from '../../src/processors/parked-streams.js'
import { retryParkedStream } from '../../src/projections/checkpoints.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { openTestApp } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// A session's card reports to the session's webhook. While the outbox has the session's stream
// parked, a card event made through the API on that card waits with the session's held turns, live
// and in a rebuild, and once the stream is retried every delivery is made in log order: the held
// turns before the card event that came after them.

/** Makes the session's card, then echoes each reply. */
const cardThenEcho = (pipelineId: string, stageId: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'lead', type: 'kanbanMove', position: { x: 200, y: 0 }, data: { pipelineId, stageId } },
    { id: 'ask', type: 'question', position: { x: 400, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Say something' } }, input: { kind: 'text' }, saveAs: 'said' } },
    { id: 'say', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'You said {{said}}' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'lead' },
    { id: 'b', source: 'lead', target: 'ask' },
    { id: 'c', source: 'ask', sourceHandle: 'default', target: 'say' },
    { id: 'd', source: 'say', target: 'ask' },
  ],
})

/** A word whose turn's webhook the database refuses to store, until the trigger is dropped. */
const POISON = 'poison-7f3a'

for (const backend of reachableBackends) {
  t.test(`a parked session's card webhooks wait behind its held turns (${backend.name})`, async (t) => {
    const test = await openTestApp(t, backend, { engine: true })
    const { db } = test.storage
    const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const response = await test.app.inject({ method, url, headers: { 'x-api-key': test.admin.apiKey }, ...(payload ? { payload } : {}) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.body ? response.json() : undefined
    }
    await call('POST', '/v1/variables', { name: 'said', type: 'string' })
    const pipeline = await call('POST', '/v1/kanban/pipelines', { name: 'Leads', stages: [{ name: 'New' }, { name: 'Won' }] })
    const flow = await call('POST', '/v1/flows', { name: 'Card, then echo', definition: cardThenEcho(pipeline.id, pipeline.stages[0].id) })
    const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`)
    const stream = sessionStream(sessionId)
    const turns = async () => (await test.store.readStream(stream)).filter((e) => e.type === ('TurnCompleted' satisfies SessionEvent['type']))
    /** The session's deliveries in the order the dispatcher sends them, each as the id of the event it reports. */
    const deliveries = async () =>
      (await db.selectFrom('webhook_deliveries').select(['event_ids']).where('session_id', '=', sessionId).orderBy('source_commit').orderBy('source_prepare').execute()).map((row) => {
        const ids = typeof row.event_ids === 'string' ? JSON.parse(row.event_ids) : row.event_ids
        return ids[0] as string
      })
    /** Waits until the outbox has passed everything written so far on `streamName`. */
    const outboxPassed = async (streamName: string) => {
      const last = (await test.store.readStream(streamName)).at(-1)!
      if (!(await test.readModels.waitFor(streamName, last.position, { timeoutMs: 20_000 }))) throw new Error(`the outbox did not pass ${streamName}`)
    }

    await eventually('the first turn', async () => ((await turns()).length === 1 ? true : undefined))
    const card = await eventually('the session card', async () => (await call('GET', `/v1/kanban/pipelines/${pipeline.id}/cards`)).content.find((c: { sessionId: string }) => c.sessionId === sessionId))
    await outboxPassed(stream)
    const [greeting] = await turns()
    t.same(await deliveries(), [greeting!.id], 'the first turn has its webhook')

    await sql`create function refuse_poisoned_webhook() returns trigger language plpgsql as $$
      begin
        if new.body like '%You said ${sql.raw(POISON)}%' then raise exception 'a webhook the test refuses'; end if;
        return new;
      end $$`.execute(db)
    await sql`create trigger refuse_poisoned_webhook before insert on webhook_deliveries for each row execute function refuse_poisoned_webhook()`.execute(db)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: POISON } })
    await eventually('the outbox to park the session', async () => ((await listParked(db, 'webhook-outbox')).some((p) => p.stream === stream) ? true : undefined), 30_000)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'later' } })
    await eventually('the turns of both messages', async () => ((await turns()).length === 3 ? true : undefined))

    await call('PATCH', `/v1/kanban/cards/${card.id}`, { stageId: pipeline.stages[1].id })
    const cardEvent = (await test.store.readStream(cardStream(card.id))).at(-1)!
    t.equal(cardEvent.type, 'CardStageChanged')
    t.ok(comparePositions(cardEvent.position, (await turns()).at(-1)!.position) > 0, 'the card event comes after the held turns in the log')
    await outboxPassed(stream)
    await outboxPassed(cardStream(card.id))
    t.same(await deliveries(), [greeting!.id], 'while the session is parked, neither its held turns nor its card event make a delivery')

    await rebuildProjection(test.storage, test.store, webhookOutboxProjection)
    t.same(await deliveries(), [greeting!.id], 'nor does a rebuild')
    t.ok((await listParked(db, 'webhook-outbox')).some((p) => p.stream === stream), 'the session stays parked')

    await sql`drop trigger refuse_poisoned_webhook on webhook_deliveries`.execute(db)
    t.equal(await retryParkedStream(test.storage.projectorDb, test.store, webhookOutboxProjection, stream), true, 'the cause gone, the session is retried')
    const [, poisoned, later] = await turns()
    t.same(await deliveries(), [greeting!.id, poisoned!.id, later!.id, cardEvent.id], 'every delivery is made, in log order: the held turns, then the card event')
    t.same(await listParked(db, 'webhook-outbox'), [], 'nothing is left parked')

    await call('PATCH', `/v1/kanban/cards/${card.id}`, { stageId: pipeline.stages[0].id })
    const back = (await test.store.readStream(cardStream(card.id))).at(-1)!
    await outboxPassed(cardStream(card.id))
    t.same((await deliveries()).at(-1), back.id, 'the live outbox serves the card again')
  })
}
