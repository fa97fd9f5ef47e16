import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'
import { curlStream } from '../helpers/sse.js'

// The session stream as a client sees it: `curl -N` against the listening service, compared with
// the webhooks a real HTTPS receiver got for the same turns.

const LOOPBACK = ['127.0.0.1/32']

for (const backend of reachableBackends) {
  t.test(`session streams on ${backend.name}`, async (t) => {
    const receiver = await startHttpsReceiver()
    t.teardown(() => receiver.close())
    const config = loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: LOOPBACK.join(','), RATE_LIMIT_PER_MINUTE: '0', STREAM_HEARTBEAT_SECONDS: '1' })
    const { app, ctx } = await openTestApp(t, backend, { config, engine: true, webhooks: { allowedPrivateCidrs: LOOPBACK, caFile: receiver.caFile } })
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload: object | undefined, key: string) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode}`)
      return response.json()
    }
    /** An organization of its own, with a key `bot` whose webhooks go to the receiver and its echo flow. */
    const arrange = async () => {
      const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
      const bot = await call('POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` }, admin.apiKey)
      await call('POST', '/v1/variables', { name: 'said', type: 'string' }, bot.apiKey)
      const flow = await call('POST', '/v1/flows', { name: 'Echo', definition: echoFlow }, bot.apiKey)
      const say = (sessionId: string, body: string) => call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body } }, bot.apiKey)
      return { bot, flow, say }
    }
    const webhookOf = (messageId: string) =>
      eventually(`the webhook of ${messageId}`, () => receiver.requests.map((r) => JSON.parse(r.body)).find((body) => body.messageId === messageId))

    await t.test('turns come as the webhooks of their turns; Last-Event-ID resumes after one; the stream ends with the session', async (t) => {
      const { bot, flow, say } = await arrange()
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, undefined, bot.apiKey)
      const stream = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, { 'x-api-key': bot.apiKey })
      const turns = () => stream.events.filter((e) => e.event === 'turn')
      await eventually('the first turn (the start)', () => turns().length >= 1 || undefined)
      const first = await say(sessionId, 'hello')
      const second = await say(sessionId, 'again')
      await eventually('three turns', () => turns().length >= 3 || undefined)
      const [start, one, two] = turns()
      for (const [turn, messageId] of [[one!, first.messageId], [two!, second.messageId]] as const) {
        t.same(JSON.parse(turn.data), await webhookOf(messageId), 'the turn event is the webhook body of that turn')
        t.match(turn.id, /^\d+\/\d+$/, 'its id is a log position')
      }
      t.equal(JSON.parse(start!.data).changes[0].value.messages[0].text.body, 'Say something')
      t.equal(new Set(turns().map((e) => e.id)).size, 3, 'each turn has its own id')
      stream.stop()

      const resumed = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, { 'x-api-key': bot.apiKey, 'last-event-id': one!.id! })
      const resumedTurns = () => resumed.events.filter((e) => e.event === 'turn')
      await eventually('the turn after the one resumed from', () => resumedTurns().length >= 1 || undefined)
      const third = await say(sessionId, 'bye')
      await eventually('the live turn', () => resumed.events.some((e) => e.event === 'end') || undefined)
      t.same(
        resumedTurns().map((e) => JSON.parse(e.data).messageId),
        [second.messageId, third.messageId],
        'only the second turn again, then the live one',
      )
      t.same(JSON.parse(resumed.events.at(-1)!.data), { status: 'completed' }, 'the stream ends with the session')
      t.equal(await resumed.exited, 0, 'and closes')

      const ended = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, { 'x-api-key': bot.apiKey, 'last-event-id': resumedTurns().at(-1)!.id! })
      t.equal(await ended.exited, 0, 'a stream of an ended session resumed after its last turn closes at once')
      t.same(ended.events.map((e) => e.event), ['end'])
    })

    await t.test('an idle stream gets keep-alive comments', async (t) => {
      const { bot, flow } = await arrange()
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, undefined, bot.apiKey)
      const stream = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, { 'x-api-key': bot.apiKey })
      await eventually('a keep-alive comment', () => stream.raw().includes(': keep-alive\n\n') || undefined)
      t.pass('kept alive')
    })

    await t.test('tenancy: another organization, another workspace, a bad Last-Event-ID', async (t) => {
      const { bot, flow } = await arrange()
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, undefined, bot.apiKey)
      const other = await createOrganization(ctx, { name: 'Other' })
      const otherWorkspace = await createWorkspace(ctx, { organizationId: other.organizationId, name: 'W' })
      const otherKey = await issueApiKey(ctx, { organizationId: other.organizationId, workspaceId: otherWorkspace.workspaceId, name: 'k', role: 'organization-admin', callbackUrl: null })
      const foreign = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/stream`, headers: { 'x-api-key': otherKey.apiKey } })
      t.equal(foreign.statusCode, 404, 'a key of another organization gets 404')
      t.equal(foreign.json().message, `session ${sessionId} not found`)
      const bad = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/stream`, headers: { 'x-api-key': bot.apiKey, 'last-event-id': 'yesterday' } })
      t.equal(bad.statusCode, 400)
      const anonymous = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/stream` })
      t.equal(anonymous.statusCode, 401)
    })

    await t.test("the editor's token reaches preview sessions of its workspace, and no other session", async (t) => {
      const { bot, flow } = await arrange()
      const client = await call('POST', '/v1/clients', { name: 'Portal' }, bot.apiKey)
      const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
      const { ott } = (await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic }, payload: {} })).json()
      const { access_token: token } = (await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott } })).json()
      const bearer = { authorization: `Bearer ${token}` }
      const preview = await app.inject({ method: 'POST', url: `/v1/flows/${flow.id}/preview-sessions`, headers: bearer })
      t.equal(preview.statusCode, 201, 'the editor starts a preview (no body)')
      const { sessionId } = preview.json()
      const stream = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, bearer)
      await eventually('the first turn on the editor\'s stream', () => stream.events.some((e) => e.event === 'turn') || undefined)
      const sent = await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers: bearer, payload: { type: 'text', text: { body: 'bye' } } })
      t.equal(sent.statusCode, 202, 'and talks to it')
      t.equal(await stream.exited, 0, 'the stream ends with the preview')
      t.same(JSON.parse(stream.events.at(-1)!.data), { status: 'completed' })

      const real = await call('POST', `/v1/sessions/flows/${flow.id}/create`, undefined, bot.apiKey)
      for (const [what, response] of [
        ['stream', await app.inject({ method: 'GET', url: `/v1/sessions/${real.sessionId}/stream`, headers: bearer })],
        ['message', await app.inject({ method: 'POST', url: `/v1/sessions/${real.sessionId}/message`, headers: bearer, payload: { type: 'text', text: { body: 'hi' } } })],
      ] as const) {
        t.equal(response.statusCode, 404, `a session that is not a preview is not found: ${what}`)
      }
      t.equal((await app.inject({ method: 'GET', url: `/v1/sessions/${real.sessionId}`, headers: bearer })).statusCode, 403, 'other session routes stay closed to it')
    })

    await t.test('a preview runs the draft, sends no webhook and stays out of the logs unless asked for', async (t) => {
      const { bot, flow, say } = await arrange()
      const greeting = JSON.parse(JSON.stringify(echoFlow).replace('Say something', 'Draft question'))
      await call('PUT', `/v1/flows/${flow.id}/definition`, greeting, bot.apiKey)
      const preview = await app.inject({ method: 'POST', url: `/v1/flows/${flow.id}/preview-sessions`, headers: { 'x-api-key': bot.apiKey }, payload: { variables: { said: 'nothing yet' } } })
      t.equal(preview.statusCode, 201)
      const { sessionId } = preview.json()
      t.same(Object.keys(preview.json()).sort(), ['expiresAt', 'sessionId', 'status'], 'it answers like session create')
      const stream = curlStream(t, `${base}/v1/sessions/${sessionId}/stream?debug=true`, { 'x-api-key': bot.apiKey })
      await eventually('the preview\'s first turn', () => stream.events.some((e) => e.event === 'turn') || undefined)
      const turn = JSON.parse(stream.events.find((e) => e.event === 'turn')!.data)
      t.equal(turn.changes[0].value.messages[0].text.body, 'Draft question', 'it runs the draft')
      const debug = JSON.parse(stream.events.find((e) => e.event === 'debug')!.data)
      t.same(debug.path, ['start', 'ask'], 'the debug event tells the path of nodes')
      t.equal(debug.waitingAt, 'ask')
      t.equal(debug.variables.said, 'nothing yet', 'and the variables')
      await say(sessionId, 'hi')
      await eventually('the reply turn', () => stream.events.filter((e) => e.event === 'turn').length >= 2 || undefined)
      // The outbox goes in log order: once a later session's first webhook arrived, it has passed the preview's turns.
      const later = await call('POST', `/v1/sessions/flows/${flow.id}/create`, undefined, bot.apiKey)
      const laterStart = (await call('GET', `/v1/sessions/${later.sessionId}/events`, undefined, bot.apiKey)).content[0]
      const laterWebhook = await webhookOf(laterStart.data.messageId)
      t.equal(laterWebhook.changes[0].value.messages[0].text.body, 'Say something', 'a session of the published version runs the published one')
      const deliveries = await call('GET', `/v1/webhooks/deliveries?sessionId=${sessionId}`, undefined, bot.apiKey)
      t.equal(deliveries.totalElements, 0, 'no delivery exists for it')
      t.notOk(receiver.requests.some((r) => JSON.parse(r.body).sessionId === sessionId), 'and no webhook reached the receiver')
      const logs = await call('GET', `/v1/sessions/logs?sessionId=${sessionId}`, undefined, bot.apiKey)
      t.equal(logs.totalElements, 0, 'the session logs do not list it')
      const previews = await call('GET', `/v1/sessions/logs?preview=true&sessionId=${sessionId}`, undefined, bot.apiKey)
      t.equal(previews.totalElements, 1, 'preview=true does')
      t.equal(previews.content[0].flowId, flow.id)
    })
  })
}
