import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createWorkspace } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { sectorStream } from '../../src/domain/sector.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { CHEAP_CLIENT_SECRET_COST, openTestApp, testEditorTokenKey } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

interface Reply {
  statusCode: number
  headers: Record<string, unknown>
  body: string
  json(): any
}

const CACHE_MS = 200
const token43 = /^[A-Za-z0-9_-]{43}$/

const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`

function expectError(t: Test, response: Reply, status: number, message?: RegExp | string) {
  t.equal(response.statusCode, status, `status ${status}`)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], 'the spec error shape')
  t.equal(body.statusCode, status)
  t.equal(body.error, { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status] ?? body.error)
  if (typeof message === 'string') t.equal(body.message, message)
  else if (message) t.match(body.message, message)
}

for (const backend of apiBackends) {
  t.test(`embedded editor authentication on ${backend.name}`, async (t) => {
    let offsetMs = 0
    const now = () => new Date(Date.now() + offsetMs)
    // Far more /auth calls from one address than its budget allows (a hundred exchanges at once
    // among them): that limit is off here; test/http/rate-limit.test.ts covers it.
    const config = { ...loadConfig({}), authRateLimitPerMinute: 0 }
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now, apiKeyCacheMs: CACHE_MS, config, clientSecretCost: CHEAP_CLIENT_SECRET_COST })
    t.afterEach(async () => {
      offsetMs = 0
    })

    const withKey = (key: string) => ({ 'x-api-key': key })
    const withBearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` })
    const createClient = async (key: string): Promise<{ clientId: string; clientSecret: string }> => {
      const response = await app.inject({ method: 'POST', url: '/v1/clients', headers: withKey(key), payload: { name: 'Portal' } })
      if (response.statusCode !== 201) throw new Error(`client not created: ${response.body}`)
      return response.json()
    }
    const iframeToken = (authorization: string | undefined, payload: string | undefined = '{}') =>
      app.inject({
        method: 'POST',
        url: '/auth/iframe-token',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        ...(payload === undefined ? {} : { payload }),
      }) as Promise<Reply>
    const ottFor = async (client: { clientId: string; clientSecret: string }) => {
      const response = await iframeToken(basic(client.clientId, client.clientSecret))
      if (response.statusCode !== 200) throw new Error(`no OTT: ${response.body}`)
      return response.json().ott as string
    }
    const exchange = (ott: unknown) => app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott } }) as Promise<Reply>
    const refresh = (refreshToken: string) => app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } }) as Promise<Reply>
    const tokensFor = async (client: { clientId: string; clientSecret: string }) => {
      const response = await exchange(await ottFor(client))
      if (response.statusCode !== 200) throw new Error(`no tokens: ${response.body}`)
      return response.json() as { access_token: string; refresh_token: string }
    }
    /** When the family of a refresh token was revoked; null while it stands. */
    const familyRevokedAt = async (refreshToken: string) =>
      (
        await storage.db
          .selectFrom('editor_refresh_tokens')
          .innerJoin('editor_token_families', 'editor_token_families.id', 'editor_refresh_tokens.family_id')
          .select(['editor_token_families.revoked_at'])
          .where('editor_refresh_tokens.token_hash', '=', createHash('sha256').update(refreshToken).digest('hex'))
          .executeTakeFirstOrThrow()
      ).revoked_at
    const asEditor = (accessToken: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
      app.inject({ method, url, headers: withBearer(accessToken), ...(payload ? { payload } : {}) }) as Promise<Reply>

    let tenants = 0
    // Each subtest works in an organization of its own with its own OAuth client, so no count,
    // list or token depends on another subtest.
    const arrange = async () => {
      tenants += 1
      const tenant = await bootstrap(ctx, { organization: `Tenant ${tenants}`, workspace: 'Main', callbackUrl: null })
      return { admin: tenant, portal: await createClient(tenant.apiKey), withKey: (key = tenant.apiKey) => withKey(key) }
    }

    await t.test('the three steps: client credentials → one-time token → access and refresh token → the API', async (t) => {
      const { admin, portal } = await arrange()
      const step1 = await iframeToken(basic(portal.clientId, portal.clientSecret))
      t.equal(step1.statusCode, 200)
      t.same(Object.keys(step1.json()), ['ott'])
      const { ott } = step1.json()
      t.match(ott, token43, '32 random bytes, base64url')
      t.equal(step1.headers['cache-control'], 'no-store')

      const stored = await storage.db.selectFrom('editor_one_time_tokens').selectAll().where('client_id', '=', portal.clientId).execute()
      t.equal(stored.length, 1)
      t.equal(stored[0]!.token_hash, createHash('sha256').update(ott).digest('hex'), 'only the SHA-256 is stored')
      t.notOk(JSON.stringify(stored).includes(ott), 'never the token')
      t.match(stored[0], { client_id: portal.clientId, workspace_id: admin.workspaceId, organization_id: admin.organizationId, used_at: null })
      t.equal(new Date(stored[0]!.expires_at).getTime() - new Date(stored[0]!.created_at).getTime(), 60_000, 'valid 60 seconds')

      const step2 = await exchange(ott)
      t.equal(step2.statusCode, 200)
      t.equal(step2.headers['cache-control'], 'no-store')
      const tokens = step2.json()
      t.same(Object.keys(tokens).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type'])
      t.match(tokens, { token_type: 'Bearer', expires_in: 900, refresh_token: token43 })

      const claims = decodeJwt(tokens.access_token)
      t.same(Object.keys(claims).sort(), ['aud', 'exp', 'iat', 'iss', 'jti', 'oid', 'sub', 'wid'])
      t.match(claims, { sub: portal.clientId, wid: admin.workspaceId, oid: admin.organizationId, aud: 'flowd-editor', iss: 'flowd' })
      t.equal(claims.exp! - claims.iat!, 900, 'an access token lives 15 minutes')
      t.match(decodeProtectedHeader(tokens.access_token), { alg: 'HS256', typ: 'at+jwt' })

      const flows = await asEditor(tokens.access_token, 'GET', '/v1/flows')
      t.equal(flows.statusCode, 200, 'the access token reaches the API')
    })

    await t.test('the iframe-token body may be {} or absent', async (t) => {
      const { portal } = await arrange()
      t.equal((await iframeToken(basic(portal.clientId, portal.clientSecret), '')).statusCode, 200, 'JSON content type, empty body')
      const bare = await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic(portal.clientId, portal.clientSecret) } })
      t.equal(bare.statusCode, 200, 'no body, no content type')
      expectError(t, await iframeToken(basic(portal.clientId, portal.clientSecret), '{"a":'), 400)
    })

    await t.test('wrong, unknown or revoked credentials and malformed headers all get the same 401', async (t) => {
      const { admin, portal, withKey } = await arrange()
      const doomed = await createClient(admin.apiKey)
      t.equal((await app.inject({ method: 'DELETE', url: `/v1/clients/${doomed.clientId}`, headers: withKey() })).statusCode, 204)
      const b64 = (text: string) => Buffer.from(text).toString('base64')
      const cases: Record<string, string | undefined> = {
        'wrong secret': basic(portal.clientId, `${portal.clientSecret}x`),
        'another client’s secret': basic(portal.clientId, doomed.clientSecret),
        'unknown client': basic(randomUUID(), portal.clientSecret),
        'client id not a UUID': basic('portal', portal.clientSecret),
        'revoked client': basic(doomed.clientId, doomed.clientSecret),
        'no header': undefined,
        'empty secret': basic(portal.clientId, ''),
        'no colon': `Basic ${b64(portal.clientId)}`,
        'not base64': 'Basic ***',
        'other scheme': `Bearer ${b64(`${portal.clientId}:${portal.clientSecret}`)}`,
        'no credentials': 'Basic',
      }
      for (const [name, authorization] of Object.entries(cases)) {
        await t.test(name, async (t) => expectError(t, await iframeToken(authorization), 401, 'Invalid client credentials'))
      }
      t.equal(await storage.db.selectFrom('editor_one_time_tokens').select('token_hash').where('client_id', '=', doomed.clientId).executeTakeFirst(), undefined)
    })

    await t.test('a one-time token expires after 60 seconds', async (t) => {
      const { portal } = await arrange()
      const early = await ottFor(portal)
      offsetMs = 59_000
      t.equal((await exchange(early)).statusCode, 200, 'still good at 59 s')
      offsetMs = 0
      const late = await ottFor(portal)
      offsetMs = 60_000
      expectError(t, await exchange(late), 401, 'Invalid or expired one-time token')
    })

    await t.test('a one-time token is good once; unknown tokens are refused alike', async (t) => {
      const { portal } = await arrange()
      const ott = await ottFor(portal)
      t.equal((await exchange(ott)).statusCode, 200)
      expectError(t, await exchange(ott), 401, 'Invalid or expired one-time token')
      expectError(t, await exchange(randomBytes(32).toString('base64url')), 401, 'Invalid or expired one-time token')
      expectError(t, await exchange(''), 400)
      expectError(t, await app.inject({ method: 'POST', url: '/auth/exchange', payload: {} }), 400)
    })

    await t.test('100 concurrent exchanges of one token: exactly one succeeds', async (t) => {
      const { portal } = await arrange()
      const ott = await ottFor(portal)
      const replies = await Promise.all(Array.from({ length: 100 }, () => exchange(ott)))
      const statuses = replies.map((r) => r.statusCode)
      t.equal(statuses.filter((s) => s === 200).length, 1, 'one 200')
      t.equal(statuses.filter((s) => s === 401).length, 99, '99 × 401')
      const hash = createHash('sha256').update(ott).digest('hex')
      const row = await storage.db.selectFrom('editor_one_time_tokens').select('used_at').where('token_hash', '=', hash).executeTakeFirstOrThrow()
      t.ok(row.used_at, 'used')
    })

    await t.test('refresh rotates; reusing a rotated token revokes its whole family', async (t) => {
      const { portal } = await arrange()
      const first = await tokensFor(portal)
      const bystander = await tokensFor(portal)

      const rotated = await refresh(first.refresh_token)
      t.equal(rotated.statusCode, 200)
      const second = rotated.json()
      t.match(second, { token_type: 'Bearer', expires_in: 900, refresh_token: token43 })
      t.not(second.refresh_token, first.refresh_token, 'a new refresh token')
      t.not(second.access_token, first.access_token, 'a new access token')
      t.equal((await asEditor(second.access_token, 'GET', '/v1/sectors')).statusCode, 200)

      const third = (await refresh(second.refresh_token)).json()
      t.match(third, { refresh_token: token43 })

      expectError(t, await refresh(first.refresh_token), 401, 'Invalid or expired refresh token')
      expectError(t, await refresh(third.refresh_token), 401, 'Invalid or expired refresh token')
      t.ok(await familyRevokedAt(third.refresh_token), 'the family is revoked')

      t.equal((await refresh(bystander.refresh_token)).statusCode, 200, 'another family is untouched')
      expectError(t, await refresh(randomBytes(32).toString('base64url')), 401, 'Invalid or expired refresh token')
    })

    await t.test('two concurrent refreshes of one token: one rotates, the other is reuse and revokes the family', async (t) => {
      const { portal } = await arrange()
      // Ten families, each refreshed twice at once, all in flight together: a rotation that read
      // the token before it used it up would let both of some pair through.
      const families = await Promise.all(Array.from({ length: 10 }, () => tokensFor(portal)))
      const bystander = await tokensFor(portal)
      const pairs = await Promise.all(families.map((tokens) => Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token)])))
      for (const [i, pair] of pairs.entries()) {
        const statuses = pair.map((r) => r.statusCode).sort()
        t.same(statuses, [200, 401], `family ${i}: one 200, one 401`)
        const loser = pair.find((r) => r.statusCode !== 200)
        if (loser) expectError(t, loser, 401, 'Invalid or expired refresh token')
        const winner = pair.find((r) => r.statusCode === 200)?.json() as { refresh_token: string } | undefined
        t.match(winner, { refresh_token: token43 }, `family ${i}: the winner got a new refresh token`)
        if (!winner) continue
        t.ok(await familyRevokedAt(winner.refresh_token), `family ${i}: revoked`)
        expectError(t, await refresh(winner.refresh_token), 401, 'Invalid or expired refresh token')
      }
      t.equal((await refresh(bystander.refresh_token)).statusCode, 200, 'another family is untouched')
    })

    await t.test('a refresh token lives 12 hours; a family at most 24', async (t) => {
      const { portal } = await arrange()
      const idle = await tokensFor(portal)
      offsetMs = 12 * 3600_000
      expectError(t, await refresh(idle.refresh_token), 401, 'Invalid or expired refresh token')

      offsetMs = 0
      let current = (await tokensFor(portal)).refresh_token
      for (const hours of [11, 22]) {
        offsetMs = hours * 3600_000
        const response = await refresh(current)
        t.equal(response.statusCode, 200, `refreshed at ${hours} h`)
        current = response.json().refresh_token
      }
      offsetMs = 24 * 3600_000
      expectError(t, await refresh(current), 401, 'Invalid or expired refresh token')
    })

    await t.test('revoking the client ends refresh at once and its access tokens within the cache time', async (t) => {
      const { portal: client, withKey } = await arrange()
      const tokens = await tokensFor(client)
      const pending = await ottFor(client)
      t.equal((await asEditor(tokens.access_token, 'GET', '/v1/flows')).statusCode, 200)
      t.equal((await app.inject({ method: 'DELETE', url: `/v1/clients/${client.clientId}`, headers: withKey() })).statusCode, 204)
      expectError(t, await refresh(tokens.refresh_token), 401, 'Invalid or expired refresh token')
      expectError(t, await exchange(pending), 401, 'Invalid or expired one-time token')
      await eventually('the bearer to be refused', async () => ((await asEditor(tokens.access_token, 'GET', '/v1/flows')).statusCode === 401 ? true : undefined), 5 * CACHE_MS + 1000)
      expectError(t, await asEditor(tokens.access_token, 'GET', '/v1/flows'), 401, 'Invalid or expired access token')
    })

    await t.test('the access token reaches the editor routes of its workspace, and 403 elsewhere', async (t) => {
      const { portal, withKey } = await arrange()
      const { access_token: token } = await tokensFor(portal)
      const flow = await app.inject({ method: 'POST', url: '/v1/flows', headers: withKey(), payload: { name: 'Welcome' } })
      t.equal(flow.statusCode, 201)
      const flowId: string = flow.json().id
      const definition = flow.json().definition
      const pipeline = await app.inject({ method: 'POST', url: '/v1/kanban/pipelines', headers: withKey(), payload: { name: 'Deals', stages: [{ name: 'New' }] } })
      t.equal(pipeline.statusCode, 201)
      const pipelineId: string = pipeline.json().id

      const sector = await asEditor(token, 'POST', '/v1/sectors', { name: 'Support' })
      t.equal(sector.statusCode, 201, 'create sector')
      const sectorId = String(sector.headers.location).split('/').pop()!
      const variable = await asEditor(token, 'POST', '/v1/variables', { name: 'plan', type: 'string' })
      t.equal(variable.statusCode, 201, 'create variable')
      const variableId: string = variable.json().id

      const allowed: [string, 'GET' | 'POST' | 'PUT' | 'PATCH', string, object?][] = [
        ['list flows', 'GET', '/v1/flows'],
        ['read a flow', 'GET', `/v1/flows/${flowId}`],
        ['save the draft', 'PUT', `/v1/flows/${flowId}/definition`, definition],
        ['validate', 'POST', '/v1/flows/validate', { definition }],
        ['publish', 'POST', `/v1/flows/${flowId}/publish`],
        ['list versions', 'GET', `/v1/flows/${flowId}/versions`],
        ['read a version', 'GET', `/v1/flows/${flowId}/versions/1`],
        ['list sectors', 'GET', '/v1/sectors'],
        ['rename a sector', 'PATCH', `/v1/sectors/${sectorId}`, { name: 'Customer support' }],
        ['list variables', 'GET', '/v1/variables'],
        ['change a variable', 'PATCH', `/v1/variables/${variableId}`, { description: 'the customer plan' }],
        ['list pipelines', 'GET', '/v1/kanban/pipelines'],
        ['read a pipeline', 'GET', `/v1/kanban/pipelines/${pipelineId}`],
      ]
      for (const [name, method, url, payload] of allowed) {
        const response = await asEditor(token, method, url, payload)
        t.equal(response.statusCode, 200, `${name}: ${assertionMessage(response.body, { maxLength: 200 })}`)
      }

      const forbidden: [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', string, object?][] = [
        ['create a session', 'POST', `/v1/sessions/flows/${flowId}/create`, {}],
        ['session logs', 'GET', '/v1/sessions/logs'],
        ['list API keys', 'GET', '/v1/api-keys'],
        ['create an API key', 'POST', '/v1/api-keys', { name: 'x', callbackUrl: 'https://example.com/hook' }],
        ['webhook deliveries', 'GET', '/v1/webhooks/deliveries'],
        ['list clients', 'GET', '/v1/clients'],
        ['create a client', 'POST', '/v1/clients', { name: 'x' }],
        ['revoke a client', 'DELETE', `/v1/clients/${portal.clientId}`],
        ['list workspaces', 'GET', '/v1/workspaces'],
        ['create a workspace', 'POST', '/v1/workspaces', { name: 'x' }],
        ['list cards', 'GET', `/v1/kanban/pipelines/${pipelineId}/cards`],
        ['create a card', 'POST', `/v1/kanban/pipelines/${pipelineId}/cards`, { stageId: pipeline.json().stages[0].id }],
        ['create a pipeline', 'POST', '/v1/kanban/pipelines', { name: 'x', stages: [{ name: 'a' }] }],
        ['change a pipeline', 'PATCH', `/v1/kanban/pipelines/${pipelineId}`, { name: 'x' }],
        ['create a flow', 'POST', '/v1/flows', { name: 'x' }],
        ['rename a flow', 'PATCH', `/v1/flows/${flowId}`, { name: 'x' }],
        ['delete a sector', 'DELETE', `/v1/sectors/${sectorId}`],
        ['delete a variable', 'DELETE', `/v1/variables/${variableId}`],
      ]
      for (const [name, method, url, payload] of forbidden) {
        await t.test(name, async (t) => expectError(t, await asEditor(token, method, url, payload), 403, 'The editor access token does not reach this endpoint'))
      }
      t.equal((await app.inject({ method: 'GET', url: `/v1/sectors`, headers: withKey() })).json().totalElements, 1, 'the sector is still there')
      t.equal((await app.inject({ method: 'GET', url: `/v1/kanban/pipelines`, headers: withKey() })).json().totalElements, 1, 'no pipeline was created')

      expectError(t, await asEditor(token, 'GET', '/v1/nothing-here'), 404)
    })

    await t.test("another workspace's records are 404, and its flows are not listed", async (t) => {
      const { admin, portal, withKey } = await arrange()
      const { access_token: token } = await tokensFor(portal)
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sibling' })
      const sibling = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      const theirs = await app.inject({ method: 'POST', url: '/v1/flows', headers: withKey(sibling.apiKey), payload: { name: 'Theirs' } })
      t.equal(theirs.statusCode, 201)
      const theirId: string = theirs.json().id
      const theirSector = await app.inject({ method: 'POST', url: '/v1/sectors', headers: withKey(sibling.apiKey), payload: { name: 'Theirs' } })
      const theirSectorId = String(theirSector.headers.location).split('/').pop()!
      t.equal((await app.inject({ method: 'POST', url: '/v1/flows', headers: withKey(), payload: { name: 'Ours' } })).statusCode, 201)

      expectError(t, await asEditor(token, 'GET', `/v1/flows/${theirId}`), 404)
      expectError(t, await asEditor(token, 'PUT', `/v1/flows/${theirId}/definition`, theirs.json().definition), 404)
      expectError(t, await asEditor(token, 'POST', `/v1/flows/${theirId}/publish`), 404)
      expectError(t, await asEditor(token, 'GET', `/v1/flows/${theirId}/versions`), 404)
      expectError(t, await asEditor(token, 'PATCH', `/v1/sectors/${theirSectorId}`, { name: 'Mine' }), 404)

      const listed = (await asEditor(token, 'GET', '/v1/flows?size=100')).json()
      t.ok(listed.content.length > 0)
      t.ok(listed.content.every((f: { workspace: { id: string } }) => f.workspace.id === admin.workspaceId), 'only its own workspace')
      t.same((await asEditor(token, 'GET', `/v1/flows?workspaceId=${workspaceId}`)).json().content, [], 'a filter cannot widen it')
      const byKey = (await app.inject({ method: 'GET', url: '/v1/flows?size=100', headers: withKey() })).json()
      t.ok(byKey.content.some((f: { id: string }) => f.id === theirId), 'an API key still lists its organization')
    })

    await t.test('a tampered, foreign, expired or wrong-audience token is 401', async (t) => {
      const { portal } = await arrange()
      const { access_token: token } = await tokensFor(portal)
      const [header, payload, signature] = token.split('.') as [string, string, string]
      const claims = decodeJwt(token)
      const reencode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
      const sign = (key: Uint8Array, overrides: { aud?: string; iss?: string; typ?: string; exp?: number } = {}) =>
        new SignJWT({ wid: claims.wid, oid: claims.oid })
          .setProtectedHeader({ alg: 'HS256', typ: overrides.typ ?? 'at+jwt' })
          .setSubject(String(claims.sub))
          .setAudience(overrides.aud ?? 'flowd-editor')
          .setIssuer(overrides.iss ?? 'flowd')
          .setIssuedAt()
          .setExpirationTime(overrides.exp ?? Math.floor(Date.now() / 1000) + 600)
          .setJti(randomUUID())
          .sign(key)
      t.equal((await asEditor(await sign(testEditorTokenKey), 'GET', '/v1/flows')).statusCode, 200, 'the forgery kit itself makes a good token')

      const cases: Record<string, string> = {
        'another workspace in the payload': `${header}.${reencode({ ...claims, wid: randomUUID() })}.${signature}`,
        'a changed signature': `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
        'alg none': `${reencode({ alg: 'none', typ: 'at+jwt' })}.${payload}.`,
        'signed with another key': await sign(randomBytes(32)),
        'another audience': await sign(testEditorTokenKey, { aud: 'flowd-dashboard' }),
        'another issuer': await sign(testEditorTokenKey, { iss: 'someone' }),
        'not an access token type': await sign(testEditorTokenKey, { typ: 'JWT' }),
        'expired by its own claim': await sign(testEditorTokenKey, { exp: Math.floor(Date.now() / 1000) - 1 }),
        garbage: 'not-a-jwt',
      }
      for (const [name, bad] of Object.entries(cases)) {
        await t.test(name, async (t) => expectError(t, await asEditor(bad, 'GET', '/v1/flows'), 401, 'Invalid or expired access token'))
      }

      await t.test('an API key sent as a Bearer token: the message says where a key goes', async (t) => {
        expectError(t, await asEditor(`wh_${'k'.repeat(43)}`, 'GET', '/v1/flows'), 401, /^Invalid or expired access token: this looks like an API key, which goes in the X-Api-Key header/)
      })

      await t.test('15 minutes after it was issued', async (t) => {
        offsetMs = 15 * 60_000
        expectError(t, await asEditor(token, 'GET', '/v1/flows'), 401, 'Invalid or expired access token')
        offsetMs = 14 * 60_000
        t.equal((await asEditor(token, 'GET', '/v1/flows')).statusCode, 200, 'still good at 14 minutes')
      })

      const bare = await app.inject({ method: 'GET', url: '/v1/flows', headers: { authorization: 'Bearer' } })
      expectError(t, bare, 401, /Missing X-Api-Key/)
    })

    await t.test('an API key wins over a bearer token on the same request', async (t) => {
      const { withKey } = await arrange()
      const response = await app.inject({ method: 'GET', url: '/v1/api-keys', headers: { ...withKey(), authorization: 'Bearer not-a-jwt' } })
      t.equal(response.statusCode, 200)
    })

    await t.test("the editor's events name its OAuth client as the actor", async (t) => {
      const { admin, portal, withKey } = await arrange()
      const { access_token: token } = await tokensFor(portal)
      const created = await asEditor(token, 'POST', '/v1/sectors', { name: 'Billing' })
      t.equal(created.statusCode, 201)
      const sectorId = String(created.headers.location).split('/').pop()!
      t.equal((await asEditor(token, 'PATCH', `/v1/sectors/${sectorId}`, { name: 'Billing and plans' })).statusCode, 200)
      const events = await store.readStream(sectorStream(sectorId))
      t.same(events.map((e) => e.metadata.actor), [`oauth-client:${portal.clientId}`, `oauth-client:${portal.clientId}`])
      t.same(events.map((e) => e.metadata.workspaceId), [admin.workspaceId, admin.workspaceId])

      const byKey = await app.inject({ method: 'POST', url: '/v1/sectors', headers: withKey(), payload: { name: 'Sales' } })
      const keySector = String(byKey.headers.location).split('/').pop()!
      t.same((await store.readStream(sectorStream(keySector))).map((e) => e.metadata.actor), [`apikey:${admin.apiKeyId}`], 'an API key is still its own actor')
    })
  })
}
