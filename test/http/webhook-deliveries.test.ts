import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The deliveries API's contract: validation, tenancy, envelope. Delivery itself is covered by
// test/webhooks/delivery.test.ts against a real receiver.

for (const backend of apiBackends) {
  t.test(`webhook deliveries API on ${backend.name}`, async (t) => {
    // The admin key has no callback: its sessions' deliveries are kept as skipped, never sent.
    const { app, admin, ctx } = await openTestApp(t, backend, { engine: true })
    const as = (key: string) => ({ 'x-api-key': key })
    const get = (url: string, key = admin.apiKey) => app.inject({ method: 'GET', url, headers: as(key) })

    const flow = (
      await app.inject({
        method: 'POST',
        url: '/v1/flows',
        headers: as(admin.apiKey),
        payload: {
          name: 'Hello',
          definition: {
            schemaVersion: 1,
            nodes: [
              { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
              { id: 'hi', type: 'message', position: { x: 200, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Hi' } }] } },
            ],
            edges: [{ id: 'a', source: 'start', target: 'hi' }],
          },
        },
      })
    ).json()
    const { sessionId } = (await app.inject({ method: 'POST', url: `/v1/sessions/flows/${flow.id}/create`, headers: as(admin.apiKey) })).json()
    const delivery: any = await eventually('the delivery of the first turn', async () => (await get(`/v1/webhooks/deliveries?sessionId=${sessionId}`)).json().content[0])

    await t.test('a delivery as listed and as shown alone', async (t) => {
      t.match(delivery, {
        sessionId,
        status: 'skipped',
        callbackUrl: null,
        body: { sessionId, changes: [{ field: 'messages', value: { messages: [{ type: 'text', text: { body: 'Hi' } }] } }] },
        attemptCount: 0,
        nextAttemptAt: null,
        heldByDestination: false,
        deliveredAt: null,
        attempts: [],
      })
      t.equal(delivery.messageId, delivery.body.messageId)
      t.equal(delivery.eventIds.length, 1)
      const alone = await get(`/v1/webhooks/deliveries/${delivery.id}`)
      t.equal(alone.statusCode, 200)
      t.same(alone.json(), delivery)
      const page = (await get('/v1/webhooks/deliveries?status=skipped&size=1')).json()
      t.match(page, { totalElements: 1, totalPages: 1, number: 0, size: 1, first: true, last: true })
      t.same((await get('/v1/webhooks/deliveries?status=dead')).json().content, [])
    })

    await t.test('bad filters and ids are 400 in the error shape', async (t) => {
      for (const [url, message] of [
        ['/v1/webhooks/deliveries?status=lost', /querystring\/status must be equal to one of the allowed values: pending, delivered, failed, dead, skipped/],
        ['/v1/webhooks/deliveries?sessionId=nope', /querystring\/sessionId must match format "uuid"/],
        ['/v1/webhooks/deliveries?size=101', /querystring\/size must be <= 100/],
        ['/v1/webhooks/deliveries?direction=UP', /querystring\/direction must be equal to one of the allowed values/],
        ['/v1/webhooks/deliveries/42', /params\/deliveryId must match format "uuid"/],
      ] as const) {
        const response = await get(url)
        t.equal(response.statusCode, 400, url)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, url)
      }
    })

    await t.test('unknown, or of another workspace: 404; no key: 401', async (t) => {
      const unknown = await get('/v1/webhooks/deliveries/0190a0b0-0000-7000-8000-000000000000')
      t.equal(unknown.statusCode, 404)
      t.same(unknown.json(), { statusCode: 404, error: 'Not Found', message: 'delivery 0190a0b0-0000-7000-8000-000000000000 not found' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Elsewhere' })
      const other = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 'other', role: 'workspace', callbackUrl: null })
      t.equal((await get(`/v1/webhooks/deliveries/${delivery.id}`, other.apiKey)).statusCode, 404)
      t.same((await get('/v1/webhooks/deliveries', other.apiKey)).json().content, [])
      const retry = await app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery.id}/retry`, headers: as(other.apiKey) })
      t.equal(retry.statusCode, 404)
      t.equal((await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries' })).statusCode, 401)
    })
  })
}
