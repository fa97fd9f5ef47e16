import { readFileSync } from 'node:fs'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { WebhookVerificationError, createFlowClient, verifyWebhook, type WebhookBody } from '../../client/src/index.js'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { oneBackend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The typed client (client/) against the service over real HTTP: its types come from openapi.json,
// its calls reach the routes, and its verifier accepts the webhooks the service signs and nothing else.

const LOOPBACK = ['127.0.0.1/32']

t.test('client/src/schema.ts is what openapi-typescript makes of openapi.json', async (t) => {
  const document = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'))
  const generated = astToString(await openapiTS(document))
  const committed = readFileSync(new URL('../../client/src/schema.ts', import.meta.url), 'utf8')
  // The generator's banner aside; `npm run openapi` writes both files.
  t.equal(committed.slice(committed.indexOf('export interface paths')), generated.slice(generated.indexOf('export interface paths')), 'out of date: run `npm run openapi` and commit client/src/schema.ts')
})

t.test('the typed client drives a session and verifies its webhooks', async (t) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const config = loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: LOOPBACK.join(','), RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' })
  const { app, admin } = await openTestApp(t, oneBackend, { config, engine: true, webhooks: { allowedPrivateCidrs: LOOPBACK, caFile: receiver.caFile } })
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })

  const asAdmin = createFlowClient({ baseUrl, apiKey: admin.apiKey })
  const workspaces = await asAdmin.GET('/v1/workspaces', { params: { query: { size: 5 } } })
  t.equal(workspaces.response.status, 200)
  t.same(workspaces.data?.content.map((w) => w.name), ['Main'])

  const key = await asAdmin.POST('/v1/api-keys', { body: { name: 'bot', callbackUrl: `${receiver.url}/hooks` } })
  t.equal(key.response.status, 201)
  const { apiKey, signingSecret } = key.data!
  const client = createFlowClient({ baseUrl, apiKey })
  await client.POST('/v1/variables', { body: { name: 'said', type: 'string' } })
  const flow = await client.POST('/v1/flows', { body: { name: 'Echo', definition: echoFlow as never } })
  t.equal(flow.response.status, 201)
  const refused = await client.POST('/v1/flows', { body: { name: 'Broken', definition: { ...echoFlow, edges: [] } as never } })
  t.equal(refused.response.status, 400, 'an error answer is data, not an exception')
  t.ok(refused.error, 'with the error body')

  const session = await client.POST('/v1/sessions/flows/{flowId}/create', { params: { path: { flowId: flow.data!.id } }, body: {} })
  t.equal(session.response.status, 201)
  const sessionId = session.data!.sessionId
  const sent = await client.POST('/v1/sessions/{sessionId}/message', { params: { path: { sessionId } }, body: { type: 'text', text: { body: 'hello' } } })
  t.equal(sent.response.status, 202)

  const requests = await eventually('two webhooks', () => (receiver.requests.length >= 2 ? receiver.requests.slice(0, 2) : undefined))
  const bodies: WebhookBody[] = requests.map((request) => verifyWebhook(signingSecret, request.headers, request.body))
  t.same(bodies.map((b) => b.sessionId), [sessionId, sessionId], 'both verified, for the session')
  const said = bodies[1]!.changes.find((c) => c.field === 'messages')
  t.match(said?.field === 'messages' ? said.value.messages[0] : undefined, { type: 'text', text: { body: 'You said hello' } }, 'typed as the webhook body')

  const [first] = requests
  t.throws(() => verifyWebhook(signingSecret, first!.headers, first!.body.replace('"changes"', '"changez"')), WebhookVerificationError, 'a changed body is refused')
  t.throws(() => verifyWebhook('whsec_' + Buffer.from('another secret!!').toString('base64'), first!.headers, first!.body), WebhookVerificationError, 'another key’s secret is refused')
  t.throws(() => verifyWebhook(signingSecret, { ...first!.headers, 'webhook-signature': undefined }, first!.body), WebhookVerificationError, 'an unsigned one is refused')
})
