import { randomBytes } from 'node:crypto'
import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createWorkspace } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { AI_CONNECTION_LIMITS } from '../../src/domain/ai-connection.js'
import { appOver, openTestApp } from '../helpers/app.js'
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js'
import { apiBackends } from '../helpers/storage.js'

// AI connections: where a workspace's AI steps send their prompts. The key lives in a workspace
// secret the connection names; the connection check reaches a real HTTPS endpoint of the test's
// own, through the same address rules as every outside call.

const CONNECTION_KEYS = ['apiKeySecret', 'baseUrl', 'callsPerSession', 'createdAt', 'headers', 'id', 'maxTokensPerCall', 'model', 'name', 'updatedAt']
const ERROR_KEYS = ['error', 'message', 'statusCode']
const json = { 'content-type': 'application/json' }

for (const backend of apiBackends) {
  t.test(`AI connections on ${backend.name}`, async (t) => {
    const endpoint: HttpsReceiver = await startHttpsReceiver()
    t.teardown(() => endpoint.close())
    const baseUrl = `${endpoint.url}/v1`
    const clock = new Date('2026-04-01T10:00:00.000Z')
    const { app, ctx, admin } = await openTestApp(t, backend, {
      now: () => clock,
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: endpoint.caFile }),
    })
    const as = (key: string) => ({ 'x-api-key': key })
    const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, key = admin.apiKey) =>
      app.inject({ method, url, headers: as(key), ...(payload === undefined ? {} : { payload: payload as object }) })
    const modelKey = `sk-${randomBytes(16).toString('hex')}`
    t.equal((await call('PUT', '/v1/secrets/openai', { value: modelKey })).statusCode, 201, 'the key is a workspace secret')
    const valid = { name: 'OpenAI', baseUrl, apiKeySecret: 'openai', model: 'gpt-4o-mini' }
    const create = async (body: object = valid) => {
      const response = await call('POST', '/v1/ai-connections', body)
      t.equal(response.statusCode, 201, `created: ${response.body}`)
      return String(response.headers.location).split('/').pop()!
    }

    await t.test('POST answers 201 with its Location; GET shows it with the defaults, and the list in name order', async (t) => {
      const created = await call('POST', '/v1/ai-connections', valid)
      t.equal(created.statusCode, 201)
      t.equal(created.body, '', 'no body, as the other resources')
      t.match(created.headers.location, /^\/v1\/ai-connections\/[0-9a-f-]{36}$/)
      const read = await call('GET', String(created.headers.location))
      t.equal(read.statusCode, 200)
      t.same(Object.keys(read.json()).sort(), CONNECTION_KEYS)
      t.match(read.json(), {
        ...valid,
        headers: [],
        maxTokensPerCall: AI_CONNECTION_LIMITS.maxTokensPerCall.default,
        callsPerSession: AI_CONNECTION_LIMITS.callsPerSession.default,
        createdAt: '2026-04-01T10:00:00.000Z',
        updatedAt: '2026-04-01T10:00:00.000Z',
      })
      t.notMatch(read.body, modelKey, 'never the key')

      await create({ ...valid, name: 'Azure', baseUrl: `${baseUrl}/`, headers: [{ name: 'api-version', value: '2024-10-21' }], maxTokensPerCall: 200, callsPerSession: 5 })
      const list = await call('GET', '/v1/ai-connections?size=10')
      t.equal(list.statusCode, 200)
      t.same(list.json().content.map((c: { name: string }) => c.name), ['Azure', 'OpenAI'])
      t.equal(list.json().totalElements, 2)
      const azure = list.json().content[0]
      t.equal(azure.baseUrl, baseUrl, 'a trailing slash is dropped: the paths are appended to it')
      t.same(azure.headers, [{ name: 'api-version', value: '2024-10-21' }])
      t.match(azure, { maxTokensPerCall: 200, callsPerSession: 5 })
    })

    await t.test('bad input: 400 in the error shape, naming what is wrong', async (t) => {
      const cases: [string, object, RegExp][] = [
        ['no model', { name: 'x', baseUrl, apiKeySecret: 'openai' }, /model/],
        ['http', { ...valid, name: 'plain', baseUrl: 'http://api.example.com/v1' }, /baseUrl must use https/],
        ['a query', { ...valid, name: 'q', baseUrl: `${baseUrl}?x=1` }, /baseUrl must not carry a query/],
        ['localhost', { ...valid, name: 'l', baseUrl: 'https://localhost/v1' }, /baseUrl must not point to localhost/],
        ['a private address', { ...valid, name: 'p', baseUrl: 'https://10.1.2.3/v1' }, /baseUrl must not point to a loopback, private/],
        ['an unknown secret', { ...valid, name: 's', apiKeySecret: 'nope' }, /no secret named "nope"/],
        ['a bad secret name', { ...valid, name: 's', apiKeySecret: 'no-dashes' }, /apiKeySecret/],
        ['the Authorization header', { ...valid, name: 'h', headers: [{ name: 'Authorization', value: 'Bearer x' }] }, /Authorization is written by the service/],
        ['a header twice', { ...valid, name: 'h', headers: [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }] }, /x-a appears twice/],
        ['a line break in a header', { ...valid, name: 'h', headers: [{ name: 'X-A', value: 'a\r\nb' }] }, /headers/],
        ['too many tokens', { ...valid, name: 'm', maxTokensPerCall: AI_CONNECTION_LIMITS.maxTokensPerCall.max + 1 }, /maxTokensPerCall/],
        ['a blank name', { ...valid, name: '   ' }, /name must not be blank/],
      ]
      for (const [what, body, message] of cases) {
        const response = await call('POST', '/v1/ai-connections', body)
        t.equal(response.statusCode, 400, what)
        t.same(Object.keys(response.json()).sort(), ERROR_KEYS, `${what}: the error shape`)
        t.match(response.json().message, message, what)
      }
      t.equal((await call('GET', '/v1/ai-connections')).json().totalElements, 2, 'nothing was created')
    })

    await t.test('names are unique without case; a workspace holds at most its limit (409)', async (t) => {
      const taken = await call('POST', '/v1/ai-connections', { ...valid, name: ' openai ' })
      t.equal(taken.statusCode, 409)
      t.match(taken.json().message, /named "OpenAI" already/)
      const more = AI_CONNECTION_LIMITS.perWorkspace - 2
      for (let i = 0; i < more; i++) await create({ ...valid, name: `Extra ${i}` })
      const over = await call('POST', '/v1/ai-connections', { ...valid, name: 'One too many' })
      t.equal(over.statusCode, 409)
      t.match(over.json().message, `holds ${AI_CONNECTION_LIMITS.perWorkspace} AI connections`)
      const list = await call('GET', '/v1/ai-connections?size=100')
      for (const extra of list.json().content.filter((c: { name: string }) => c.name.startsWith('Extra '))) {
        t.equal((await call('DELETE', `/v1/ai-connections/${extra.id}`)).statusCode, 204)
      }
      t.equal((await call('GET', '/v1/ai-connections')).json().totalElements, 2, 'deleted')
    })

    await t.test('PATCH replaces the fields given, checked as on create; DELETE answers 204, then 404', async (t) => {
      const id = await create({ ...valid, name: 'Patched' })
      const changed = await call('PATCH', `/v1/ai-connections/${id}`, { model: 'gpt-4o', headers: [{ name: 'OpenAI-Project', value: 'proj_1' }] })
      t.equal(changed.statusCode, 200)
      t.match(changed.json(), { id, name: 'Patched', model: 'gpt-4o', baseUrl, headers: [{ name: 'OpenAI-Project', value: 'proj_1' }] })
      t.equal((await call('GET', `/v1/ai-connections/${id}`)).json().model, 'gpt-4o', 'kept')
      t.equal((await call('PATCH', `/v1/ai-connections/${id}`, {})).statusCode, 200, 'no change answers the connection as it is')
      const clash = await call('PATCH', `/v1/ai-connections/${id}`, { name: 'OPENAI' })
      t.equal(clash.statusCode, 409)
      const bad = await call('PATCH', `/v1/ai-connections/${id}`, { baseUrl: 'ftp://models.example.com/v1' })
      t.equal(bad.statusCode, 400)
      t.equal((await call('DELETE', `/v1/ai-connections/${id}`)).statusCode, 204)
      for (const [method, url] of [['GET', `/v1/ai-connections/${id}`], ['PATCH', `/v1/ai-connections/${id}`], ['DELETE', `/v1/ai-connections/${id}`], ['POST', `/v1/ai-connections/${id}/check`]] as const) {
        const response = await call(method, url, method === 'PATCH' ? { model: 'x' } : undefined)
        t.equal(response.statusCode, 404, `${method} ${url} after delete`)
      }
    })

    await t.test('another workspace, of the organization or not, sees none of them: 404', async (t) => {
      const id = (await call('GET', '/v1/ai-connections')).json().content[0].id
      const sibling = await createWorkspace(ctx, { organizationId: admin.organizationId, name: `Sibling ${randomBytes(3).toString('hex')}` })
      const key = (await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sibling.workspaceId, name: 's', role: 'workspace', callbackUrl: null })).apiKey
      t.equal((await call('GET', '/v1/ai-connections', undefined, key)).json().totalElements, 0)
      for (const [method, url] of [['GET', `/v1/ai-connections/${id}`], ['PATCH', `/v1/ai-connections/${id}`], ['DELETE', `/v1/ai-connections/${id}`], ['POST', `/v1/ai-connections/${id}/check`]] as const) {
        t.equal((await call(method, url, method === 'PATCH' ? { model: 'x' } : undefined, key)).statusCode, 404, `${method} ${url}`)
      }
      t.equal((await call('GET', `/v1/ai-connections/${id}`)).statusCode, 200, 'still there for its own workspace')
    })

    await t.test("a connection's own headers go with its chat calls, beside the key", async (t) => {
      const azure = (await call('GET', '/v1/ai-connections')).json().content.find((c: { name: string }) => c.name === 'Azure')
      const step = { connectionId: azure.id, mode: 'classify', instructions: 'You route messages.', labels: [{ id: 'cancel', description: 'wants to cancel' }] }
      const completion = { choices: [{ index: 0, message: { role: 'assistant', content: '{"label": "cancel"}' }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 4 } }
      const seen = endpoint.requests.length
      endpoint.respondWith([{ status: 200, headers: json, body: JSON.stringify(completion) }])
      const tried = await call('POST', '/v1/ai-steps/try', { step, message: 'please cancel my plan' })
      t.equal(tried.statusCode, 200, tried.body)
      t.match(tried.json(), { exit: 'cancel' }, 'the answer was read')
      t.equal(endpoint.requests.length, seen + 1, 'one call reached the endpoint')
      const asked = endpoint.requests[seen]!
      t.match(asked, { method: 'POST', path: '/v1/chat/completions' })
      t.equal(asked.headers['api-version'], '2024-10-21', "the connection's header reached the endpoint")
      t.equal(asked.headers.authorization, `Bearer ${modelKey}`, 'with the key from the secret')
      const shown = tried.json().request.headers.find((header: { name: string }) => header.name === 'api-version')
      t.same(shown, { name: 'api-version', value: '2024-10-21' }, 'the call shown to the editor has it too')
    })

    await t.test('the check reaches the endpoint with the key and reads its model list', async (t) => {
      const id = (await call('GET', '/v1/ai-connections')).json().content.find((c: { name: string }) => c.name === 'OpenAI').id
      const check = async () => {
        const response = await call('POST', `/v1/ai-connections/${id}/check`)
        t.equal(response.statusCode, 200, response.body)
        t.notMatch(response.body, modelKey, 'the answer never holds the key')
        return response.json()
      }
      const seen = endpoint.requests.length
      const models = (ids: string[]) => ({ status: 200, headers: json, body: JSON.stringify({ object: 'list', data: ids.map((model) => ({ id: model, object: 'model' })) }) })

      endpoint.respondWith([models(['gpt-4o', 'gpt-4o-mini'])])
      t.match(await check(), { ok: true, models: ['gpt-4o', 'gpt-4o-mini'] })
      const asked = endpoint.requests[seen]!
      t.match(asked, { method: 'GET', path: '/v1/models' })
      t.equal(asked.headers.authorization, `Bearer ${modelKey}`, 'the endpoint saw the key from the secret')

      endpoint.respondWith([models(['llama3.1'])])
      const missing = await check()
      t.match(missing, { ok: false, models: ['llama3.1'], problem: /does not list the model gpt-4o-mini; it lists llama3.1/ })

      endpoint.respondWith([{ status: 401, headers: json, body: JSON.stringify({ error: { message: 'Incorrect API key provided' } }) }])
      t.match(await check(), { ok: false, problem: /refused the key \(401: Incorrect API key provided\); check the secret openai/ })

      // No model list (some gateways): one call of a single token decides.
      const before = endpoint.requests.length
      endpoint.respondWith([{ status: 404, body: 'not found' }, { status: 200, headers: json, body: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'p' } }] }) }])
      t.match(await check(), { ok: true, models: [] })
      const ping = endpoint.requests[before + 1]!
      t.match(ping, { method: 'POST', path: '/v1/chat/completions' })
      t.same(JSON.parse(ping.body), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 })

      endpoint.respondWith([{ status: 404 }, { status: 404 }])
      t.match(await check(), { ok: false, problem: /has no .*\/v1\/chat\/completions \(404\); baseUrl usually ends in \/v1/ })

      await endpoint.down()
      try {
        t.match(await check(), { ok: false, problem: /could not be reached/ })
      } finally {
        await endpoint.up()
      }

      t.equal((await call('DELETE', '/v1/secrets/openai')).statusCode, 204)
      t.match(await check(), { ok: false, problem: /the key could not be read: no secret openai/ })
    })
  })
}

t.test('without the operator allowing its range, a private endpoint is refused on create and by the check', async (t) => {
  const endpoint = await startHttpsReceiver()
  t.teardown(() => endpoint.close())
  const baseUrl = `${endpoint.url}/v1`
  // A connection made while the operator allowed the range, which the operator then withdrew: the
  // same database under an app configured without it.
  const allowing = await openTestApp(t, apiBackends[0]!, {
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: endpoint.caFile }),
  })
  const headers = { 'x-api-key': allowing.admin.apiKey }
  await allowing.app.inject({ method: 'PUT', url: '/v1/secrets/k', headers, payload: { value: 'v' } })
  const allowed = await allowing.app.inject({ method: 'POST', url: '/v1/ai-connections', headers, payload: { name: 'Allowed then', baseUrl, apiKeySecret: 'k', model: 'm' } })
  t.equal(allowed.statusCode, 201, allowed.body)
  const app = await appOver(t, allowing.storage.db, allowing.store, { config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_CA_FILE: endpoint.caFile }) })

  const refused = await app.inject({ method: 'POST', url: '/v1/ai-connections', headers, payload: { name: 'Local', baseUrl, apiKeySecret: 'k', model: 'm' } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /baseUrl must not point to a loopback, private, link-local or otherwise non-public address \(127\.0\.0\.1\)/)
  const check = await app.inject({ method: 'POST', url: `${allowed.headers.location}/check`, headers })
  t.equal(check.statusCode, 200, check.body)
  t.match(check.json(), { ok: false, models: [], problem: /needs its range allowed by the operator \(WEBHOOK_ALLOWED_PRIVATE_CIDRS\)/ }, 'the check refuses the stored connection')
  t.equal(endpoint.requests.length, 0, 'nothing reached it')
})
