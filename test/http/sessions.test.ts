import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { sessionLogsProjection } from '../../src/projections/session-logs.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

for (const backend of apiBackends) {
  t.test(`sessions on ${backend.name}`, async (t) => {
    let clock = new Date('2026-05-01T12:00:00.000Z')
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now: () => clock })
    const as = (key: string) => ({ 'x-api-key': key })

    /** An organization of its own at noon, with the workspace variables name, age and vip and a flow. */
    const arrange = async (t: Test) => {
      clock = new Date('2026-05-01T12:00:00.000Z')
      const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
      for (const variable of [{ name: 'name', type: 'string' }, { name: 'age', type: 'number' }, { name: 'vip', type: 'boolean', defaultValue: false }]) {
        t.equal((await app.inject({ method: 'POST', url: '/v1/variables', headers: as(admin.apiKey), payload: variable })).statusCode, 201)
      }
      const flow = (await app.inject({ method: 'POST', url: '/v1/flows', headers: as(admin.apiKey), payload: { name: 'Support' } })).json()
      const start = (payload?: object, flowId = flow.id, key = admin.apiKey) =>
        app.inject({ method: 'POST', url: `/v1/sessions/flows/${flowId}/create`, headers: as(key), ...(payload ? { payload } : {}) })
      const send = (sessionId: string, payload: unknown, headers: Record<string, string> = {}) =>
        app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers: { ...as(admin.apiKey), ...headers }, payload: payload as object })
      const logs = async (query = '', key = admin.apiKey) => {
        const response = await app.inject({ method: 'GET', url: `/v1/sessions/logs${query}`, headers: as(key) })
        t.equal(response.statusCode, 200, `GET /v1/sessions/logs${query}`)
        return response.json()
      }
      const events = async (sessionId: string, size: number) => (await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/events?size=${size}`, headers: as(admin.apiKey) })).json()
      return { admin, flow, start, send, logs, events }
    }
    /** As arrange, with one session started on the flow without a body. */
    const arrangeSession = async (t: Test) => {
      const arranged = await arrange(t)
      const started = await arranged.start()
      t.equal(started.statusCode, 201, 'the session starts')
      return { ...arranged, sessionId: started.json().sessionId as string }
    }

    await t.test('create answers 201 with sessionId, status active and expiresAt; the body is optional', async (t) => {
      const { start } = await arrange(t)
      const response = await start()
      t.equal(response.statusCode, 201)
      const body = response.json()
      t.same(Object.keys(body).sort(), ['expiresAt', 'sessionId', 'status'])
      t.equal(body.status, 'active')
      t.equal(body.expiresAt, '2026-05-01T12:30:00.000Z', 'the default inactivity timeout is 30 minutes')
      const withBody = await start({ variables: { name: 'Ana' }, externalId: '+5511999990000' })
      t.equal(withBody.statusCode, 201)
    })

    await t.test("a flow's own inactivity timeout sets expiresAt", async (t) => {
      const { admin, start } = await arrange(t)
      const quick = (
        await app.inject({
          method: 'POST',
          url: '/v1/flows',
          headers: as(admin.apiKey),
          payload: {
            name: 'Quick',
            definition: {
              schemaVersion: 1,
              settings: { sessionTtlSeconds: 600 },
              nodes: [
                { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
                { id: 'end', type: 'end', position: { x: 200, y: 0 }, data: {} },
              ],
              edges: [{ id: 'e', source: 'start', target: 'end' }],
            },
          },
        })
      ).json()
      const response = await start(undefined, quick.id)
      t.equal(response.statusCode, 201)
      t.equal(response.json().expiresAt, '2026-05-01T12:10:00.000Z')
    })

    await t.test('variables must be workspace variables of the right type; defaults fill the rest', async (t) => {
      const { admin, start } = await arrange(t)
      const bad = await start({ variables: { name: 7, age: 'old', nickname: 'x' } })
      t.equal(bad.statusCode, 400)
      for (const key of ['name', 'age', 'nickname']) t.match(bad.json().message, `variables.${key}`)
      const good = await start({ variables: { name: 'Ana', age: 31 } })
      t.equal(good.statusCode, 201)
      const detail = (await app.inject({ method: 'GET', url: `/v1/sessions/${good.json().sessionId}`, headers: as(admin.apiKey) })).json()
      t.same(detail.variables, { name: 'Ana', age: 31, vip: false })
    })

    await t.test('the session log shows a new session the moment create returns', async (t) => {
      const { admin, flow, logs, sessionId } = await arrangeSession(t)
      const page = await logs(`?sessionId=${sessionId}`)
      t.equal(page.totalElements, 1)
      const entry = page.content[0]
      t.same(Object.keys(entry).sort(), ['expiresAt', 'externalId', 'finishedAt', 'flowId', 'id', 'startedAt', 'status', 'warnings', 'workspaceId'])
      t.same(entry, {
        id: sessionId,
        workspaceId: admin.workspaceId,
        flowId: flow.id,
        externalId: null,
        status: entry.status,
        warnings: 0,
        startedAt: '2026-05-01T12:00:00.000Z',
        expiresAt: '2026-05-01T12:30:00.000Z',
        finishedAt: entry.finishedAt,
      })
    })

    await t.test('create refuses unknown or foreign flows with 404 and bad bodies with 400', async (t) => {
      const { flow, start, logs, sessionId } = await arrangeSession(t)
      t.equal((await start(undefined, '00000000-0000-4000-8000-000000000000')).statusCode, 404)
      t.equal((await start(undefined, 'nope')).statusCode, 400)
      const variablesNotObject = await start({ variables: 'x' })
      t.equal(variablesNotObject.statusCode, 400)
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const ws = await createWorkspace(ctx, { organizationId, name: 'G' })
      const stranger = await issueApiKey(ctx, { organizationId, workspaceId: ws.workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      const foreign = await start(undefined, flow.id, stranger.apiKey)
      t.equal(foreign.statusCode, 404)
      t.same(foreign.json(), { statusCode: 404, message: `flow ${flow.id} not found`, error: 'Not Found' })
      t.same((await logs('', stranger.apiKey)).content, [], 'another organization sees no session logs')
      const sendForeign = await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers: as(stranger.apiKey), payload: { type: 'text', text: { body: 'hi' } } })
      t.equal(sendForeign.statusCode, 404)
      t.equal((await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: as(stranger.apiKey) })).statusCode, 404)
    })

    await t.test('send validates the body exactly by type', async (t) => {
      const { send, sessionId } = await arrangeSession(t)
      const cases: [unknown, RegExp][] = [
        [{}, /body must have required property 'type'/],
        [{ type: 'location' }, /body\/type must be equal to one of the allowed values: text, interactive, image, video, audio, document, sticker/],
        [{ type: 'text' }, /body\/text is required when type is text/],
        [{ type: 'text', text: {} }, /body\/text must have required property 'body'/],
        [{ type: 'text', text: { body: 7 } }, /body\/text\/body must be string/],
        [{ type: 'image' }, /body\/media is required when type is image/],
        [{ type: 'document', media: { url: 'https://x.test/a.pdf' } }, /body\/media must have required property 'mimeType'/],
        [{ type: 'image', media: { mimeType: 'jpeg', url: 'https://x.test/a.jpg' } }, /body\/media\/mimeType must match pattern/],
        [{ type: 'image', media: { mimeType: 'image/jpeg', url: 'ftp://x.test/a.jpg' } }, /body\/media\/url must match pattern/],
        [{ type: 'interactive' }, /body\/interactive is required when type is interactive/],
        [{ type: 'interactive', interactive: { type: 'button_reply' } }, /body\/interactive\/button_reply is required when interactive.type is button_reply/],
        [{ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'r1' } } }, /body\/interactive\/list_reply must have required property 'title'/],
        [{ type: 'interactive', interactive: { type: 'quick_reply' } }, /body\/interactive\/type must be equal to one of the allowed values: button_reply, list_reply/],
      ]
      for (const [payload, message] of cases) {
        const response = await send(sessionId, payload)
        t.equal(response.statusCode, 400, assertionMessage(payload))
        t.match(response.json().message, message, assertionMessage(payload))
      }
    })

    await t.test('send answers 202 queued for every message type', async (t) => {
      const { send, sessionId } = await arrangeSession(t)
      for (const payload of [
        { type: 'text', text: { body: 'hello' } },
        { type: 'image', media: { mimeType: 'image/jpeg', url: 'https://cdn.example.com/a.jpg', caption: 'me' } },
        { type: 'sticker', media: { mimeType: 'image/webp', url: 'https://cdn.example.com/s.webp' } },
        { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } } },
        { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'r1', title: 'Row 1' } } },
      ]) {
        const response = await send(sessionId, payload)
        t.equal(response.statusCode, 202, payload.type)
        t.same(Object.keys(response.json()).sort(), ['messageId', 'status'])
        t.equal(response.json().status, 'queued')
      }
    })

    await t.test('properties a send body does not name are ignored, never recorded', async (t) => {
      const { send, events: eventsOf, sessionId } = await arrangeSession(t)
      for (const type of ['button_reply', 'list_reply'] as const) {
        const response = await send(sessionId, { type: 'interactive', interactive: { type, [type]: { id: 'extra', title: 'Extra', note: 'x' } } })
        t.equal(response.statusCode, 202, type)
        const events = await eventsOf(sessionId, 500)
        const received = events.content.find((e: { type: string; data: { messageId: string } }) => e.type === 'MessageReceived' && e.data.messageId === response.json().messageId)
        t.same(received.data.message.interactive[type], { id: 'extra', title: 'Extra' })
      }
    })

    await t.test('an Idempotency-Key makes a retried send answer the same messageId without a second message', async (t) => {
      const { send, events: eventsOf, sessionId } = await arrangeSession(t)
      const first = await send(sessionId, { type: 'text', text: { body: 'once' } }, { 'idempotency-key': 'k-1' })
      const again = await send(sessionId, { type: 'text', text: { body: 'once' } }, { 'idempotency-key': 'k-1' })
      t.equal(first.statusCode, 202)
      t.equal(again.statusCode, 202)
      t.equal(again.json().messageId, first.json().messageId)
      const events = await eventsOf(sessionId, 500)
      t.equal(events.content.filter((e: { type: string; data: { message?: { text?: { body: string } } } }) => e.type === 'MessageReceived' && e.data.message?.text?.body === 'once').length, 1)
    })

    await t.test('a session past its expiry takes no more messages; unknown sessions are 404', async (t) => {
      const { send, sessionId } = await arrangeSession(t)
      clock = new Date('2026-05-01T13:00:00.000Z')
      const late = await send(sessionId, { type: 'text', text: { body: 'late' } })
      t.equal(late.statusCode, 409)
      t.same(late.json(), { statusCode: 409, message: 'Session is not active', error: 'Conflict' })
      const unknown = await send('00000000-0000-4000-8000-000000000000', { type: 'text', text: { body: 'x' } })
      t.equal(unknown.statusCode, 404)
    })

    await t.test('the session and its events can be read back', async (t) => {
      const { admin, flow, send, events: eventsOf, sessionId } = await arrangeSession(t)
      for (const body of ['one', 'two', 'three', 'four', 'five', 'six']) t.equal((await send(sessionId, { type: 'text', text: { body } })).statusCode, 202, body)
      const detail = (await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: as(admin.apiKey) })).json()
      t.match(detail, { id: sessionId, flowId: flow.id, flowVersion: 1, workspaceId: admin.workspaceId, externalId: null })
      const events = await eventsOf(sessionId, 2)
      t.equal(events.content.length, 2)
      t.equal(events.content[0].type, 'SessionStarted')
      t.equal(events.content[0].revision, 0)
      t.equal(events.content[0].metadata.actor, `apikey:${admin.apiKeyId}`)
      t.equal(events.totalElements, 7, 'the start and six messages, beyond the page')
    })

    await t.test('log filters', async (t) => {
      const { admin, start, logs } = await arrange(t)
      for (const payload of [undefined, { variables: { name: 'Ana' }, externalId: '+5511999990000' }, { variables: { name: 'Ana', age: 31 } }, undefined]) {
        t.equal((await start(payload)).statusCode, 201)
      }
      t.equal((await logs()).totalElements, 4)
      t.equal((await logs(`?workspaceId=${admin.workspaceId}&dateRange=today`)).totalElements, 4)
      t.equal((await logs('?status=timeout')).totalElements, 0)
      t.match((await app.inject({ method: 'GET', url: '/v1/sessions/logs?status=done', headers: as(admin.apiKey) })).json().message, /running, completed, timeout, error/)
      t.match((await app.inject({ method: 'GET', url: '/v1/sessions/logs?orderBy=color', headers: as(admin.apiKey) })).json().message, /startedAt/)
    })

    await t.test('rebuilding the session log gives the same rows', async (t) => {
      const { start, send, sessionId } = await arrangeSession(t)
      t.equal((await start({ variables: { name: 'Ana' }, externalId: '+5511999990000' })).statusCode, 201)
      t.equal((await send(sessionId, { type: 'text', text: { body: 'hello' } })).statusCode, 202)
      clock = new Date('2026-05-01T13:00:00.000Z')
      t.equal((await send(sessionId, { type: 'text', text: { body: 'late' } })).statusCode, 409)
      const before = await storage.db.selectFrom('session_logs').selectAll().orderBy('id').execute()
      t.ok(before.length >= 2)
      await rebuildProjection(storage, store, sessionLogsProjection)
      t.same(await storage.db.selectFrom('session_logs').selectAll().orderBy('id').execute(), before)
    })
  })
}
