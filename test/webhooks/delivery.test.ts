import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { bootstrap } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { claimDueDeliveries } from '../../src/webhooks/deliveries.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp, type TestApp, type TestWebhookSettings } from '../helpers/app.js'
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { echoFlow } from '../helpers/flows.js'
import { apiBackends, reachableBackends, type Backend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Acceptance of webhook delivery, against real HTTPS receivers on 127.0.0.1 with certificates
// made at setup. Keys are created with the receivers allowed (WEBHOOK_ALLOWED_PRIVATE_CIDRS); the
// dispatcher gets the same setting and the receivers' certificates as its only extra CAs.

const LOOPBACK = ['127.0.0.1/32']
const LEASE_MS = 400

interface Harness extends TestApp {
  receiver: HttpsReceiver
  apiKey: string
  apiKeyId: string
  signingSecret: string
  call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<any>
  /** Waits until the receiver has `count` requests, then returns them. */
  received(count: number): Promise<ReceivedRequest[]>
}

interface DeliveryApp {
  /** The next scenario's harness: its receiver, and an organization of its own with a key whose callback is that receiver. */
  harness(): Promise<Harness>
}

/**
 * An app with engine and dispatcher for `scenarios` scenarios run one after another. Each scenario
 * has a receiver of its own (the dispatcher trusts all their certificates) and an organization of
 * its own, so that no scenario sees another's webhooks, deliveries or destination.
 */
async function deliveryApp(t: Test, backend: Backend, scenarios: number, webhooks: Partial<TestWebhookSettings> = {}): Promise<DeliveryApp> {
  const receivers = await Promise.all(Array.from({ length: scenarios }, () => startHttpsReceiver()))
  t.teardown(() => Promise.all(receivers.map((receiver) => receiver.close())))
  const dir = mkdtempSync(join(tmpdir(), 'flowd-receivers-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const caFile = join(dir, 'receivers.pem')
  writeFileSync(caFile, receivers.map((receiver) => readFileSync(receiver.caFile, 'utf8')).join(''))
  const config = loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: LOOPBACK.join(',') })
  const app = await openTestApp(t, backend, { config, engine: true, webhooks: { allowedPrivateCidrs: LOOPBACK, caFile, ...webhooks } })
  let scenario = 0
  return {
    async harness() {
      const receiver = receivers[scenario++]
      if (!receiver) throw new Error(`more scenarios than the ${scenarios} the app was opened for`)
      const admin = await bootstrap(app.ctx, { organization: `Scenario ${scenario}`, workspace: 'Main', callbackUrl: null })
      const created = await app.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: { 'x-api-key': admin.apiKey },
        payload: { name: 'bot', callbackUrl: `${receiver.url}/hooks` },
      })
      if (created.statusCode !== 201) throw new Error(`creating the key: ${created.statusCode} ${created.body}`)
      const { id: apiKeyId, apiKey, signingSecret } = created.json() as { id: string; apiKey: string; signingSecret: string }
      const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
        const response = await app.app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) })
        if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
        return response.body ? response.json() : undefined
      }
      const received = (count: number) =>
        eventually(`${count} webhooks at the receiver (got ${receiver.requests.length})`, () => (receiver.requests.length >= count ? receiver.requests.slice(0, count) : undefined))
      return { ...app, admin, receiver, apiKey, apiKeyId, signingSecret, call, received }
    },
  }
}

/** Waits until the outbox (and every other projection of `stream`) has applied the newest event of `stream`. */
async function outboxApplied(t: Test, h: Harness, stream: string): Promise<void> {
  const last = (await h.store.readStream(stream)).at(-1)
  if (!last) throw new Error(`${stream} has no events`)
  t.ok(await h.readModels.waitFor(stream, last.position, { timeoutMs: 20_000 }), `the outbox applied the newest event of ${stream.split('-')[0]}`)
}

const headersOf = (request: ReceivedRequest) => Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))

/** Creates the echo flow (and the variable it saves to) in the harness's workspace. */
async function echo(h: Harness): Promise<{ id: string }> {
  await h.call('POST', '/v1/variables', { name: 'said', type: 'string' })
  return h.call('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
}

// The outbox, each session's order and the claims are the store's work: on every reachable store.
for (const backend of reachableBackends) {
  t.test(`webhooks on ${backend.name}: outbox, order and claims`, async (t) => {
    // Its first scenario rebuilds the outbox over every delivery the app holds, all of them its own.
    const quickRetries = await deliveryApp(t, backend, 2)
    await t.test('a session from create to finish: every webhook deep-equal to its expected body and signed', async (t) => {
      const h = await quickRetries.harness()
      await h.call('POST', '/v1/variables', { name: 'name', type: 'string' })
      await h.call('POST', '/v1/variables', { name: 'plan', type: 'string' })
      await h.call('POST', '/v1/variables', { name: 'more', type: 'string' })
      await h.call('POST', '/v1/sectors', { name: 'Sales' })
      const sector = (await h.call('GET', '/v1/sectors')).content[0]
      const pipeline = await h.call('POST', '/v1/kanban/pipelines', {
        name: 'Leads',
        stages: [{ name: 'New', color: '#2196F3' }, { name: 'Won', color: '#4CAF50' }],
        fields: [{ name: 'Plan', type: 'text', required: false, isFeatured: true }],
      })
      const [stageNew, stageWon] = pipeline.stages
      const planField = pipeline.fields[0].id
      const buttons = { type: 'interactive', interactive: { type: 'button', body: { text: 'Which plan?' }, action: { buttons: [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro' }] } } }
      const flow = await h.call('POST', '/v1/flows', {
        name: 'Plans',
        definition: {
          schemaVersion: 1,
          nodes: [
            { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
            { id: 'hello', type: 'message', position: { x: 200, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Hi {{name}}!' }, tags: ['greeting'] }] } },
            { id: 'plan', type: 'question', position: { x: 400, y: 0 }, data: { prompt: { ...buttons, tags: ['ask-plan'] }, input: { kind: 'choice' }, saveAs: 'plan' } },
            { id: 'lead', type: 'kanbanMove', position: { x: 600, y: 0 }, data: { pipelineId: pipeline.id, stageId: stageNew.id, values: { [planField]: '{{plan}}' }, tags: ['lead'] } },
            { id: 'more', type: 'question', position: { x: 800, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Anything else, {{name}}?' } }, input: { kind: 'text' }, saveAs: 'more' } },
            { id: 'human', type: 'transfer', position: { x: 1000, y: 0 }, data: { targetType: 'sector', targetId: sector.id } },
            { id: 'bye', type: 'end', position: { x: 1200, y: 0 }, data: {} },
          ],
          edges: [
            { id: 'e1', source: 'start', target: 'hello' },
            { id: 'e2', source: 'hello', target: 'plan' },
            { id: 'e3', source: 'plan', sourceHandle: 'pro', target: 'lead' },
            { id: 'e4', source: 'plan', sourceHandle: 'basic', target: 'bye' },
            { id: 'e5', source: 'lead', target: 'more' },
            { id: 'e6', source: 'more', sourceHandle: 'default', target: 'human' },
          ],
        },
      })

      const { sessionId } = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { name: 'Ana' } })
      const [first] = await h.received(1)
      const events = async () => (await h.call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { id: string; type: string; data: any }[]
      const started = (await events()).find((e) => e.type === 'SessionStarted')!
      t.same(JSON.parse(first!.body), {
        sessionId,
        messageId: started.data.messageId,
        changes: [{ field: 'messages', value: { messages: [{ type: 'text', text: { body: 'Hi Ana!' }, tags: ['greeting'] }, { ...buttons, tags: ['ask-plan'] }] } }],
      }, 'session creation sends the initial flow response')

      const { messageId: proMessage } = await h.call('POST', `/v1/sessions/${sessionId}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } })
      const [, second] = await h.received(2)
      const proTurn = (await events()).filter((e) => e.type === 'TurnCompleted')[1]!.data.output
      const cardId = proTurn.kanban[0].cardId
      t.same(JSON.parse(second!.body), {
        sessionId,
        messageId: proMessage,
        changes: [
          { field: 'messages', value: { messages: [{ type: 'text', text: { body: 'Anything else, Ana?' } }] } },
          { field: 'event', value: { events: [{ domain: 'kanban', type: 'card.created', payload: { cardId, pipelineId: pipeline.id, stageId: stageNew.id }, timestamp: proTurn.kanban[0].timestamp }] } },
        ],
      }, 'the kanbanMove is reported in its turn, not again for the card stream')

      // An operator works the session's card through the API while the session is active.
      await eventually('the card in the read model', async () => (await h.call('GET', `/v1/kanban/pipelines/${pipeline.id}/cards`)).content[0])
      await h.call('PATCH', `/v1/kanban/cards/${cardId}`, { values: { [planField]: 'enterprise' }, tags: ['lead', 'vip'], stageId: stageWon.id })
      const [, , updated, moved] = await h.received(4)
      const cardEvents = (await h.call('GET', `/v1/webhooks/deliveries?sessionId=${sessionId}&size=100`)).content.slice(2)
      const [updatedEventId, movedEventId] = cardEvents.map((d: { eventIds: string[] }) => d.eventIds[0])
      const updatedBody = JSON.parse(updated!.body)
      t.same(updatedBody, {
        sessionId,
        messageId: updatedEventId,
        changes: [{ field: 'event', value: { events: [{ domain: 'kanban', type: 'card.updated', payload: { cardId, pipelineId: pipeline.id, changedFields: [planField], tags: ['lead', 'vip'] }, timestamp: updatedBody.changes[0].value.events[0].timestamp }] } }],
      })
      const movedBody = JSON.parse(moved!.body)
      t.same(movedBody, {
        sessionId,
        messageId: movedEventId,
        changes: [{ field: 'event', value: { events: [{ domain: 'kanban', type: 'card.stage.changed', payload: { cardId, pipelineId: pipeline.id, stageId: stageWon.id, previousStageId: stageNew.id }, timestamp: movedBody.changes[0].value.events[0].timestamp }] } }],
      })
      t.ok(Number.isInteger(movedBody.changes[0].value.events[0].timestamp) && movedBody.changes[0].value.events[0].timestamp > proTurn.kanban[0].timestamp, 'card timestamps are microseconds, after the turn')

      const { messageId: lastMessage } = await h.call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'no, thanks' } })
      const fifth = (await h.received(5))[4]!
      const lastTurn = (await events()).filter((e) => e.type === 'TurnCompleted')[2]!.data.output
      t.same(JSON.parse(fifth.body), {
        sessionId,
        messageId: lastMessage,
        changes: [{ field: 'function', value: { functions: [{ type: 'transfer', targetType: 'sector', targetId: sector.id, timestamp: lastTurn.functions[0].timestamp }] } }],
      }, 'a transfer ends the session')

      // The session has ended: card operations no longer reach its callback. Once the outbox has
      // applied the deletion, any webhook for it would be a row already.
      await h.call('DELETE', `/v1/kanban/cards/${cardId}`)
      await outboxApplied(t, h, `card-${cardId}`)
      t.equal((await h.call('GET', `/v1/webhooks/deliveries?sessionId=${sessionId}&size=100`)).totalElements, 5, 'no delivery for a card of a finished session')
      t.equal(h.receiver.requests.length, 5, 'nothing sent for it')

      for (const request of h.receiver.requests) {
        t.equal(request.method, 'POST')
        t.equal(request.path, '/hooks')
        t.equal(request.headers['content-type'], 'application/json')
        t.match(request.headers['user-agent'], /^flowd-webhooks\//)
        t.same(new Webhook(h.signingSecret).verify(request.body, headersOf(request)), JSON.parse(request.body), 'standardwebhooks verifies the signature')
      }
      // The receiver notes a request on arrival; its attempt is recorded once the answer is back.
      const deliveries = await eventually('every attempt recorded', async () => {
        const listed = (await h.call('GET', `/v1/webhooks/deliveries?sessionId=${sessionId}`)).content
        return listed.every((d: { attempts: unknown[] }) => d.attempts.length > 0) ? listed : undefined
      })
      t.same(deliveries.map((d: { id: string }) => d.id), h.receiver.requests.map((r) => r.headers['webhook-id']), 'the deliveries API lists them in order, by webhook-id')
      t.same(deliveries.map((d: { status: string }) => d.status), ['delivered', 'delivered', 'delivered', 'delivered', 'delivered'])
      t.same(deliveries.map((d: { body: unknown }) => d.body), h.receiver.requests.map((r) => JSON.parse(r.body)), 'each delivery shows the body as sent')
      t.same(deliveries[0].eventIds, [(await events()).find((e) => e.type === 'TurnCompleted')!.id], 'a turn webhook names the event it came from')
      t.same(deliveries[0].attempts.map((a: { statusCode: number }) => a.statusCode), [200])

      await t.test('a rebuild of the outbox sends nothing again', async (t) => {
        const before = await h.storage.db.selectFrom('webhook_deliveries').select(['id', 'status', 'body', 'attempt_count']).orderBy('id').execute()
        await rebuildProjection(h.storage, h.store, webhookOutboxProjection)
        // Rows read before the receiver is counted: a row sent again would be at the receiver by
        // then, and one left to send would differ from the row before.
        t.same(await h.storage.db.selectFrom('webhook_deliveries').select(['id', 'status', 'body', 'attempt_count']).orderBy('id').execute(), before)
        t.equal(h.receiver.requests.length, 5)
      })
    })

    await t.test('two messages back to back while the first delivery fails: they arrive in order', async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      const { sessionId } = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await h.received(1)
      h.receiver.respondWith([503, 500])
      const one = await h.call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'one' } })
      const two = await h.call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'two' } })
      const requests = (await h.received(5)).slice(1)
      t.same(requests.map((r) => JSON.parse(r.body).messageId), [one.messageId, one.messageId, one.messageId, two.messageId], 'the second waits for the first')
      t.same(requests.map((r) => JSON.parse(r.body).changes[0].value.messages[0].text.body), ['You said one', 'You said one', 'You said one', 'You said two'])
    })

    // A retry 30 s away, and leases short enough to run out many times over while an answer is held.
    // This app's first scenario claims every due delivery as another dispatcher: none of the second's is due yet.
    const slowRetriesShortLeases = await deliveryApp(t, backend, 2, { retrySchedule: [0, 30], leaseMs: LEASE_MS })
    await t.test('a claim is renewed while its attempt runs: no other dispatcher takes it, and it is sent once', async (t) => {
      const h = await slowRetriesShortLeases.harness()
      const flow = await echo(h)
      // Held until the claim was renewed past two leases and another dispatcher looked: without
      // renewals the claim would run out while the receiver holds it.
      const answer = h.receiver.hold()
      const session = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await h.received(1)
      const claimed = await h.storage.db.selectFrom('webhook_deliveries').select(['id', 'lease_token', 'lease_until']).where('session_id', '=', session.sessionId).executeTakeFirstOrThrow()
      const claimedUntil = new Date(claimed.lease_until!).getTime()
      // The same claim (its token), its lease moved on: a claim that ran out and was taken again has another token.
      await eventually('the claim renewed past its first lease', async () => {
        const row = await h.storage.db.selectFrom('webhook_deliveries').select(['lease_token', 'lease_until']).where('id', '=', claimed.id).executeTakeFirstOrThrow()
        if (row.lease_token !== claimed.lease_token) throw new Error('the claim ran out and was taken again')
        return row.lease_until !== null && new Date(row.lease_until).getTime() >= claimedUntil + 2 * LEASE_MS ? true : undefined
      })
      const elsewhere = await claimDueDeliveries(h.storage.dispatcherDb, { now: new Date(), limit: 100, leaseMs: LEASE_MS, firstDelaySeconds: 0 })
      t.notOk(elsewhere.some((delivery) => delivery.id === claimed.id), 'another dispatcher finds it claimed')
      answer()
      await eventually('the delivery recorded as delivered', async () => {
        const row = await h.storage.db.selectFrom('webhook_deliveries').select(['status', 'lease_token']).where('id', '=', claimed.id).executeTakeFirstOrThrow()
        return row.status === 'delivered' ? row : undefined
      }).then((row) => t.equal(row.lease_token, null, 'the recorded attempt releases the claim'))
      t.equal(h.receiver.requests.filter((request) => String(request.headers['webhook-id']) === claimed.id).length, 1, 'sent once')
    })

    await t.test('different sessions do not wait for each other', async (t) => {
      const h = await slowRetriesShortLeases.harness()
      const flow = await echo(h)
      h.receiver.respondWith([500])
      const stuck = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await h.received(1)
      const free = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const [, second] = await h.received(2)
      t.equal(JSON.parse(second!.body).sessionId, free.sessionId, 'the other session is delivered while the first waits 30 s for its retry')
      const waiting = await eventually('the first attempt recorded', async () => {
        const [listed] = (await h.call('GET', `/v1/webhooks/deliveries?sessionId=${stuck.sessionId}`)).content
        return listed?.attempts.length > 0 ? listed : undefined
      })
      t.equal(waiting.status, 'failed')
      t.ok(Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.attempts[0].attemptedAt) >= 27_000, 'the next attempt follows the schedule, with jitter')
    })
  })
}

// Schedules, manual retries, redirects, blocked addresses and callbacks are the dispatcher's own
// rules, alike on any store: on one (apiBackends; every store with TEST_EVERY_BACKEND=1).
for (const backend of apiBackends) {
  t.test(`webhook delivery rules on ${backend.name}`, async (t) => {
    // The scenarios of the default schedule (three attempts 0.2 s apart) share an app, each in an organization of its own.
    const quickRetries = await deliveryApp(t, backend, 5)
    await t.test('500, 500, then 200: delivered on the third attempt with the same webhook-id', async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      h.receiver.respondWith([500, { status: 500, body: 'try later' }, 200])
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const requests = await h.received(3)
      t.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id across retries')
      t.equal(requests[0]!.body, requests[2]!.body, 'the same body each time')
      const delivery = await eventually('the delivered status', async () => {
        const [d] = (await h.call('GET', '/v1/webhooks/deliveries?status=delivered')).content
        return d
      })
      t.equal(delivery.id, requests[0]!.headers['webhook-id'])
      t.equal(delivery.attemptCount, 3)
      t.same(delivery.attempts.map((a: { statusCode: number }) => a.statusCode), [500, 500, 200])
      t.same(delivery.attempts.map((a: { attempt: number }) => a.attempt), [1, 2, 3])
      const detail = await h.call('GET', `/v1/webhooks/deliveries/${delivery.id}`)
      t.equal(detail.attempts[1].responseBody, 'try later', 'the detail keeps response bodies')
      t.notOk('responseBody' in delivery.attempts[0], 'the list leaves them out')
    })

    await t.test('receiver down for the whole schedule: dead; a manual retry delivers it', async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      await h.receiver.down()
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const dead = await eventually('a dead delivery', async () => (await h.call('GET', '/v1/webhooks/deliveries?status=dead')).content[0])
      t.equal(dead.attempts.length, 3, 'every attempt of the schedule was made')
      t.ok(dead.attempts.every((a: { statusCode: null; error: string }) => a.statusCode === null && /ECONNREFUSED/.test(a.error)), 'each failed to connect')
      t.equal(h.receiver.requests.length, 0)

      await h.receiver.up()
      const retried = await h.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${dead.id}/retry`, headers: { 'x-api-key': h.apiKey } })
      t.equal(retried.statusCode, 202)
      t.equal(retried.json().status, 'pending')
      const [request] = await h.received(1)
      t.equal(request!.headers['webhook-id'], dead.id, 'the retry keeps the webhook-id')
      const delivered = await eventually('delivered', async () => {
        const d = await h.call('GET', `/v1/webhooks/deliveries/${dead.id}`)
        return d.status === 'delivered' ? d : undefined
      })
      t.equal(delivered.attemptCount, 4)

      const again = await h.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${dead.id}/retry`, headers: { 'x-api-key': h.apiKey } })
      t.equal(again.statusCode, 202, 'a delivered webhook can be sent again too')
      await h.received(2)
      t.equal(h.receiver.requests[1]!.headers['webhook-id'], dead.id)
    })

    await t.test("the callback is the key's as it was when the session started", async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      const { sessionId } = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await h.received(1)
      // A name nothing resolves: a delivery there fails, and nothing leaves this machine.
      const changed = `https://${h.receiver.dnsName}:${h.receiver.port}/changed`
      const patched = await h.app.inject({ method: 'PATCH', url: `/v1/api-keys/${h.apiKeyId}`, headers: { 'x-api-key': h.admin.apiKey }, payload: { callbackUrl: changed } })
      t.equal(patched.statusCode, 200)
      await h.call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'still here' } })
      const [, second] = await h.received(2)
      t.equal(second!.path, '/hooks', 'the running session keeps the callback it started with')
      const later = await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const delivery = await eventually('the new session\'s delivery', async () => (await h.call('GET', `/v1/webhooks/deliveries?sessionId=${later.sessionId}`)).content[0])
      t.equal(delivery.callbackUrl, changed, 'a new session takes the changed callback')
    })

    await t.test('Retry-After on 429 is honoured when it asks for longer than the schedule', async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      h.receiver.respondWith([{ status: 429, headers: { 'retry-after': '120' } }])
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await h.received(1)
      const waiting = await eventually('the failed delivery', async () => (await h.call('GET', '/v1/webhooks/deliveries?status=failed')).content[0])
      const wait = Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.attempts[0].attemptedAt)
      t.ok(wait >= 119_000 && wait <= 121_000, `waits what the receiver asked (${wait} ms)`)
    })

    await t.test('a key without a callback: the delivery is kept as skipped', async (t) => {
      const h = await quickRetries.harness()
      const flow = await echo(h)
      const response = await h.app.inject({ method: 'POST', url: `/v1/sessions/flows/${flow.id}/create`, headers: { 'x-api-key': h.admin.apiKey } })
      const { sessionId } = response.json()
      const skipped = await eventually('the skipped delivery', async () => {
        const list = await h.app.inject({ method: 'GET', url: `/v1/webhooks/deliveries?sessionId=${sessionId}`, headers: { 'x-api-key': h.admin.apiKey } })
        return list.json().content[0]
      })
      t.match(skipped, { status: 'skipped', callbackUrl: null, attempts: [] })
      const retry = await h.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${skipped.id}/retry`, headers: { 'x-api-key': h.admin.apiKey } })
      t.equal(retry.statusCode, 409)
      t.match(retry.json(), { statusCode: 409, error: 'Conflict', message: /no callback URL/ })
      // The refused retry left nothing due: a skipped delivery with no attempt is never sent.
      const after = await h.app.inject({ method: 'GET', url: `/v1/webhooks/deliveries/${skipped.id}`, headers: { 'x-api-key': h.admin.apiKey } })
      t.match(after.json(), { status: 'skipped', callbackUrl: null, attemptCount: 0, nextAttemptAt: null, attempts: [] })
      t.equal(h.receiver.requests.length, 0)
    })

    await t.test('a failed delivery waiting an hour for its next attempt: a manual retry sends it now', async (t) => {
      const h = await (await deliveryApp(t, backend, 1, { retrySchedule: [0, 3600, 3600] })).harness()
      const flow = await echo(h)
      h.receiver.respondWith([500])
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const failed = await eventually('a failed delivery', async () => (await h.call('GET', '/v1/webhooks/deliveries?status=failed')).content[0])
      t.ok(Date.parse(failed.nextAttemptAt) - Date.now() > 60_000, 'its next attempt is far off')
      const retried = await h.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${failed.id}/retry`, headers: { 'x-api-key': h.apiKey } })
      t.equal(retried.statusCode, 202)
      t.equal(retried.json().status, 'failed', 'still failed, now due')
      const delivered = await eventually('delivered', async () => {
        const d = await h.call('GET', `/v1/webhooks/deliveries/${failed.id}`)
        return d.status === 'delivered' ? d : undefined
      })
      t.same(delivered.attempts.map((a: { statusCode: number }) => a.statusCode), [500, 200], 'the next attempt of its schedule, made at once')
    })

    await t.test('a 3xx is a failure and is not followed', async (t) => {
      const h = await (await deliveryApp(t, backend, 1, { retrySchedule: [0] })).harness()
      const flow = await echo(h)
      h.receiver.respondWith([{ status: 307, headers: { location: `${h.receiver.url}/elsewhere` } }])
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const dead = await eventually('the dead delivery', async () => (await h.call('GET', '/v1/webhooks/deliveries?status=dead')).content[0])
      t.same(dead.attempts.map((a: { statusCode: number }) => a.statusCode), [307])
      t.same(h.receiver.requests.map((r) => r.path), ['/hooks'], 'the redirect was not followed')
    })

    await t.test('without WEBHOOK_ALLOWED_PRIVATE_CIDRS the receiver gets zero requests', async (t) => {
      const h = await (await deliveryApp(t, backend, 1, { allowedPrivateCidrs: [] })).harness()
      const flow = await echo(h)
      await h.call('POST', `/v1/sessions/flows/${flow.id}/create`)
      const dead = await eventually('the dead delivery', async () => (await h.call('GET', '/v1/webhooks/deliveries?status=dead')).content[0])
      t.ok(dead.attempts.length === 3 && dead.attempts.every((a: { error: string }) => /^blocked: /.test(a.error)), 'every attempt failed as blocked')
      t.match(dead.lastError, /127\.0\.0\.1/)
      t.equal(h.receiver.requests.length, 0, 'zero requests reached the receiver')
    })
  })
}
