import t, { type Test } from 'tap'
import { dashboardSignInUrl, issueSignInLink } from '../../src/auth/dashboard-sessions.js'
import { hashApiKey, issueApiKey, revokeApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createWorkspace } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { flowStream } from '../../src/domain/flow.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

interface Reply {
  statusCode: number
  headers: Record<string, unknown>
  body: string
  json(): any
}

/** The `flowd_session` cookie a sign-in answered, as `name=value` for the next requests. */
function sessionCookie(response: Reply): string {
  const header = response.headers['set-cookie']
  const cookies = (Array.isArray(header) ? header : [header]).map(String)
  const session = cookies.find((cookie) => cookie.startsWith('flowd_session='))
  if (!session) throw new Error('no session cookie was set')
  return session.split(';')[0]!
}

const setCookieOf = (response: Reply): string[] => {
  const header = response.headers['set-cookie']
  return header === undefined ? [] : (Array.isArray(header) ? header : [header]).map(String)
}

function expectError(t: Test, response: Reply, status: number, message?: RegExp) {
  t.equal(response.statusCode, status, `status ${status}`)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], 'the spec error shape')
  if (message) t.match(body.message, message)
}

async function signIn(service: TestApp, body: object, headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url: '/auth/session', payload: body, headers })
}

for (const backend of apiBackends) {
  t.test(`the dashboard session on ${backend.name}`, async (t) => {
    const config = { ...loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }), authRateLimitPerMinute: 0 }
    const service = await openTestApp(t, backend, { config, apiKeyCacheMs: 0 })
    const { admin } = service

    t.test('an API key signs in once: an HttpOnly, SameSite=Strict cookie, and the session with its CSRF token', async (t) => {
      const response = await signIn(service, { apiKey: admin.apiKey })
      t.equal(response.statusCode, 201)
      const [cookie] = setCookieOf(response)
      t.match(cookie, /^flowd_session=[A-Za-z0-9_-]{43};/)
      t.match(cookie, /; HttpOnly/)
      t.match(cookie, /; SameSite=Strict/)
      t.match(cookie, /; Path=\//)
      t.notMatch(cookie, /; Secure/, 'not Secure over plain http (the browser would drop it)')
      t.notMatch(cookie, new RegExp(admin.apiKey), 'the key itself is never in the cookie')
      const body = response.json()
      t.same(Object.keys(body).sort(), ['apiKeyId', 'csrfToken', 'expiresAt', 'organizationId', 'role', 'workspaceId'])
      t.equal(body.apiKeyId, admin.apiKeyId)
      t.equal(body.role, 'organization-admin')
      t.equal(response.headers['cache-control'], 'no-store')

      const again = await service.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: sessionCookie(response) } })
      t.equal(again.statusCode, 200)
      t.equal(again.json().csrfToken, body.csrfToken, 'a reloaded page gets the same CSRF token back')
    })

    t.test('behind an HTTPS proxy the cookie is Secure', async (t) => {
      const behindProxy = await openTestApp(t, backend, { config: { ...config, trustProxy: ['127.0.0.1'] } })
      const response = await behindProxy.app.inject({
        method: 'POST',
        url: '/auth/session',
        payload: { apiKey: behindProxy.admin.apiKey },
        headers: { 'x-forwarded-proto': 'https' },
        remoteAddress: '127.0.0.1',
      })
      t.equal(response.statusCode, 201)
      t.match(setCookieOf(response)[0], /; Secure/)
    })

    t.test('a wrong key, a malformed one or nothing: 401 or 400 in the spec shape, and no cookie', async (t) => {
      for (const body of [{ apiKey: 'wh_not-a-key' }, { apiKey: 'sk_other' }, { link: 'unknown-link' }]) {
        const response = await signIn(service, body)
        expectError(t, response, 401, /^Invalid API key or sign-in link$/)
        t.same(setCookieOf(response), [])
      }
      for (const body of [{}, { apiKey: '' }, { apiKey: admin.apiKey, link: 'x' }, { apiKey: 42 }]) {
        const response = await signIn(service, body)
        expectError(t, response, 400)
        t.same(setCookieOf(response), [])
      }
      expectError(t, await service.app.inject({ method: 'GET', url: '/auth/session' }), 401)
      expectError(t, await service.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: 'flowd_session=forged' } }), 401)
    })

    t.test('the session calls /v1 as its key; a write needs the CSRF token, and no other site may start one', async (t) => {
      const response = await signIn(service, { apiKey: admin.apiKey })
      const cookie = sessionCookie(response)
      const { csrfToken } = response.json()

      const list = await service.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } })
      t.equal(list.statusCode, 200, 'a read needs the cookie only')

      const withoutToken = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { cookie }, payload: { name: 'Forged' } })
      expectError(t, withoutToken, 403, /X-CSRF-Token/)
      const wrongToken = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { cookie, 'x-csrf-token': 'x'.repeat(43) }, payload: { name: 'Forged' } })
      expectError(t, wrongToken, 403, /X-CSRF-Token/)
      const crossSite = await service.app.inject({
        method: 'POST',
        url: '/v1/flows',
        headers: { cookie, 'x-csrf-token': csrfToken, 'sec-fetch-site': 'cross-site' },
        payload: { name: 'Forged' },
      })
      expectError(t, crossSite, 403, /other sites/)
      const forgedFlows = await service.app.inject({ method: 'GET', url: '/v1/flows?size=100', headers: { 'x-api-key': admin.apiKey } })
      t.notOk(
        forgedFlows.json().content.some((flow: { name: string }) => flow.name === 'Forged'),
        'no refused write left anything behind',
      )

      const created = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { cookie, 'x-csrf-token': csrfToken, 'sec-fetch-site': 'same-origin' }, payload: { name: 'Mine' } })
      t.equal(created.statusCode, 201, 'with the token, from the dashboard itself')

      const otherSession = sessionCookie(await signIn(service, { apiKey: admin.apiKey }))
      const tokenOfAnother = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { cookie: otherSession, 'x-csrf-token': csrfToken }, payload: { name: 'Forged' } })
      expectError(t, tokenOfAnother, 403, /X-CSRF-Token/)
    })

    t.test('sign-out ends the session on the server: the same cookie then gets 401', async (t) => {
      const response = await signIn(service, { apiKey: admin.apiKey })
      const cookie = sessionCookie(response)
      const { csrfToken } = response.json()
      expectError(t, await service.app.inject({ method: 'DELETE', url: '/auth/session', headers: { cookie } }), 403)
      t.equal((await service.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } })).statusCode, 200, 'a sign-out without the token did nothing')

      const signOut = await service.app.inject({ method: 'DELETE', url: '/auth/session', headers: { cookie, 'x-csrf-token': csrfToken } })
      t.equal(signOut.statusCode, 204)
      t.match(setCookieOf(signOut)[0], /^flowd_session=;.*Expires=Thu, 01 Jan 1970/, 'the cookie is cleared')
      expectError(t, await service.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } }), 401)
      expectError(t, await service.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } }), 401)
      const again = await service.app.inject({ method: 'DELETE', url: '/auth/session', headers: { cookie, 'x-csrf-token': csrfToken } })
      expectError(t, again, 401)
      t.match(setCookieOf(again)[0], /^flowd_session=;/, 'a stale cookie is cleared all the same')
    })

    t.test('a one-time link signs in once; a revoked key ends its sessions', async (t) => {
      const { ctx } = service
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Link' })
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 'link', role: 'workspace', callbackUrl: null })
      const token = await issueSignInLink(service.storage.db, hashApiKey(key.apiKey), new Date())
      t.match(dashboardSignInUrl('http://127.0.0.1:3000/', token), /^http:\/\/127\.0\.0\.1:3000\/dashboard\/sign-in#token=[A-Za-z0-9_-]{43}$/)

      const first = await signIn(service, { link: token })
      t.equal(first.statusCode, 201)
      t.equal(first.json().workspaceId, workspaceId)
      expectError(t, await signIn(service, { link: token }), 401)

      const cookie = sessionCookie(first)
      t.equal((await service.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } })).statusCode, 200)
      await revokeApiKey(ctx, key.apiKeyId)
      expectError(t, await service.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } }), 401)
      const linkOfRevoked = await issueSignInLink(service.storage.db, hashApiKey(key.apiKey), new Date())
      expectError(t, await signIn(service, { link: linkOfRevoked }), 401)
    })

    t.test("a session ends 8 hours after sign-in and a link works for 24 hours after it is printed, on the service's clock", async (t) => {
      let clock = new Date('2036-05-01T09:00:00.000Z')
      const later = (ms: number) => new Date(Date.parse('2036-05-01T09:00:00.000Z') + ms)
      const timed = await openTestApp(t, backend, { config, now: () => clock })
      const hours = 3_600_000

      const response = await signIn(timed, { apiKey: timed.admin.apiKey })
      t.equal(response.json().expiresAt, '2036-05-01T17:00:00.000Z')
      t.match(setCookieOf(response)[0], /; Max-Age=28800;/, 'the cookie ends with it')
      const cookie = sessionCookie(response)
      const flows = () => timed.app.inject({ method: 'GET', url: '/v1/flows', headers: { cookie } })
      clock = later(8 * hours - 1)
      t.equal((await flows()).statusCode, 200, 'a millisecond before its end')
      t.equal((await timed.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } })).statusCode, 200)
      clock = later(8 * hours)
      expectError(t, await flows(), 401)
      expectError(t, await timed.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } }), 401)

      const keyHash = hashApiKey(timed.admin.apiKey)
      const [early, late] = [await issueSignInLink(timed.storage.db, keyHash, later(0)), await issueSignInLink(timed.storage.db, keyHash, later(0))]
      clock = later(24 * hours - 1)
      t.equal((await signIn(timed, { link: early })).statusCode, 201, 'a link a millisecond before its end')
      clock = later(24 * hours)
      expectError(t, await signIn(timed, { link: late }), 401, /^Invalid API key or sign-in link$/)
    })

    t.test("a workspace key's session reaches only its workspace", async (t) => {
      const { ctx } = service
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Narrow' })
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 'narrow', role: 'workspace', callbackUrl: null })
      const response = await signIn(service, { apiKey: key.apiKey })
      const cookie = sessionCookie(response)
      const { csrfToken } = response.json()
      const workspaces = await service.app.inject({ method: 'GET', url: '/v1/workspaces?size=100', headers: { cookie } })
      t.same(
        workspaces.json().content.map((workspace: { id: string }) => workspace.id),
        [workspaceId],
        'its own workspace only',
      )
      const editorForOther = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers: { cookie, 'x-csrf-token': csrfToken }, payload: { workspaceId: admin.workspaceId } })
      expectError(t, editorForOther, 403)
      const editorForOwn = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers: { cookie, 'x-csrf-token': csrfToken }, payload: { workspaceId } })
      t.equal(editorForOwn.statusCode, 200)
    })

    t.test("what a session writes, and what the editor it signed in writes, names the session's key as the actor", async (t) => {
      const key = await issueApiKey(service.ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name: 'actor', role: 'workspace', callbackUrl: null })
      const response = await signIn(service, { apiKey: key.apiKey })
      const headers = { cookie: sessionCookie(response), 'x-csrf-token': response.json().csrfToken }
      const actor = `apikey:${key.apiKeyId}`

      const flow = await service.app.inject({ method: 'POST', url: '/v1/flows', headers, payload: { name: 'Written by the dashboard' } })
      t.equal(flow.statusCode, 201)
      const flowId: string = flow.json().id
      const started = await service.app.inject({ method: 'POST', url: `/v1/sessions/flows/${flowId}/create`, headers })
      t.equal(started.statusCode, 201)
      const audit = await service.app.inject({ method: 'GET', url: `/v1/sessions/${started.json().sessionId}/events`, headers })
      t.same(
        audit.json().content.map((event: { type: string; metadata: { actor: string } }) => [event.type, event.metadata.actor]),
        [['SessionStarted', actor]],
        "the session's events, as the audit shows them",
      )

      const ott = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers, payload: { workspaceId: admin.workspaceId } })
      const exchanged = await service.app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: ott.json().ott } })
      const { definition } = flow.json()
      const moved = { ...definition, nodes: definition.nodes.map((node: { position: { x: number; y: number } }) => ({ ...node, position: { x: node.position.x, y: node.position.y + 80 } })) }
      const saved = await service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: { authorization: `Bearer ${exchanged.json().access_token}` }, payload: moved })
      t.equal(saved.statusCode, 200)
      const flowEvents = await service.store.readStream(flowStream(flowId))
      t.same(
        flowEvents.map((event) => [event.type, event.metadata.actor]),
        [['FlowCreated', actor], ['FlowPublished', actor], ['FlowDraftSaved', actor]],
        "the flow's events: created and published in the session, then saved by its editor",
      )
    })

    t.test('the dashboard signs the editor in without an OAuth client; the editor ends with the session', async (t) => {
      const response = await signIn(service, { apiKey: admin.apiKey })
      const cookie = sessionCookie(response)
      const { csrfToken } = response.json()
      const flow = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'Edited from the dashboard' } })
      const flowId = flow.json().id

      const withoutToken = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers: { cookie }, payload: { workspaceId: admin.workspaceId } })
      expectError(t, withoutToken, 403, /X-CSRF-Token/)
      const issued = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers: { cookie, 'x-csrf-token': csrfToken }, payload: { workspaceId: admin.workspaceId } })
      t.equal(issued.statusCode, 200)
      const exchanged = await service.app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: issued.json().ott } })
      t.equal(exchanged.statusCode, 200, 'the editor trades it as any one-time token')
      const { access_token: access, refresh_token: refresh } = exchanged.json()
      const bearer = { authorization: `Bearer ${access}` }
      t.equal((await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: bearer })).statusCode, 200, 'the editor reads the workspace flow')
      t.equal((await service.app.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer })).statusCode, 403, 'and only the editor routes')
      const saved = await service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: bearer, payload: flow.json().definition })
      t.equal(saved.statusCode, 200)
      const events = await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: { 'x-api-key': admin.apiKey } })
      t.equal(events.statusCode, 200)

      const elsewhere = await bootstrap(service.ctx, { organization: 'Other', workspace: 'Theirs', callbackUrl: null })
      const foreign = await service.app.inject({ method: 'POST', url: '/auth/session/editor-token', headers: { cookie, 'x-csrf-token': csrfToken }, payload: { workspaceId: elsewhere.workspaceId } })
      expectError(t, foreign, 404)

      await service.app.inject({ method: 'DELETE', url: '/auth/session', headers: { cookie, 'x-csrf-token': csrfToken } })
      expectError(t, await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: bearer }), 401)
      expectError(t, await service.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refresh } }), 401)
    })
  })
}
