import { createHash } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { apiKeysProjection } from '../../src/projections/api-keys.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const RECORD_FIELDS = ['callbackUrl', 'createdAt', 'id', 'keyPrefix', 'name', 'role', 'workspaceId']
const CACHE_MS = 200

interface KeyRecord {
  id: string
  name: string
  workspaceId: string
  role: string
  callbackUrl: string | null
  keyPrefix: string
  createdAt: string
}
interface CreatedKey extends KeyRecord {
  apiKey: string
  signingSecret: string
}

const client = ({ app }: TestApp, defaultKey: string) => {
  const as = (key: string) => ({ 'x-api-key': key })
  return {
    get: (query = '', key = defaultKey) => app.inject({ method: 'GET', url: `/v1/api-keys${query}`, headers: as(key) }),
    list: async (query = '', key = defaultKey) => (await app.inject({ method: 'GET', url: `/v1/api-keys${query}`, headers: as(key) })).json(),
    create: (payload: unknown, key = defaultKey) => app.inject({ method: 'POST', url: '/v1/api-keys', headers: as(key), payload: payload as object }),
    patch: (id: string, payload: unknown, key = defaultKey) => app.inject({ method: 'PATCH', url: `/v1/api-keys/${id}`, headers: as(key), payload: payload as object }),
    remove: (id: string, key = defaultKey) => app.inject({ method: 'DELETE', url: `/v1/api-keys/${id}`, headers: as(key) }),
    workspaces: (key: string) => app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(key) }),
  }
}

const expectError = (t: Test, response: LightMyRequestResponse, status: number, message: RegExp) => {
  t.equal(response.statusCode, status, `${status}: ${message}`)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], 'the spec error shape')
  t.equal(body.statusCode, status)
  t.match(body.message, message)
}

const ids = (page: { content: KeyRecord[] }) => page.content.map((k) => k.id)

/** Every spelling of a callback the service must refuse, with the reason it gives. */
const refusedCallbacks: [string, RegExp][] = [
  ['http://hooks.example.com/flow', /callbackUrl must use https/],
  ['not a url', /callbackUrl is not a valid URL/],
  ['https://user:pw@hooks.example.com/flow', /must not carry a user name or password/],
  ['https://localhost/hook', /must not point to localhost/],
  ['https://api.localhost/hook', /must not point to localhost/],
  ['https://127.0.0.1/hook', /non-public address \(127\.0\.0\.1\)/],
  ['https://2130706433/hook', /non-public address \(127\.0\.0\.1\)/],
  ['https://0x7f.1/hook', /non-public address \(127\.0\.0\.1\)/],
  ['https://127.1/hook', /non-public address \(127\.0\.0\.1\)/],
  ['https://[::1]/hook', /non-public address/],
  ['https://[::ffff:127.0.0.1]/hook', /non-public address/],
  ['https://10.1.2.3/hook', /non-public address/],
  ['https://172.16.0.1/hook', /non-public address/],
  ['https://192.168.0.10/hook', /non-public address/],
  ['https://169.254.169.254/latest/meta-data', /non-public address/],
  ['https://0.0.0.0/hook', /non-public address/],
  ['https://100.64.0.1/hook', /non-public address/],
  ['https://[fd00::1]/hook', /non-public address/],
  ['https://[fe80::1]/hook', /non-public address/],
]

for (const backend of apiBackends) {
  t.test(`API keys on ${backend.name}`, async (t) => {
    const testApp = await openTestApp(t, backend, { apiKeyCacheMs: CACHE_MS })
    const { ctx, storage, store } = testApp
    let tenants = 0
    // Each subtest works in an organization of its own (workspaces Main and Sales, and the bootstrap
    // key of Main), so no list or count depends on another subtest.
    const arrangeTenant = async () => {
      const admin = await bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })
      const { workspaceId: salesWs } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      return { admin, salesWs, api: client(testApp, admin.apiKey) }
    }
    const arrangeKey = async (api: ReturnType<typeof client>, payload: object): Promise<CreatedKey> => {
      const response = await api.create(payload)
      if (response.statusCode !== 201) throw new Error(`arranging a key answered ${response.statusCode}`)
      return response.json()
    }
    /** The workspace key "ci" of Main, made through the API. */
    const arrangeCi = (api: ReturnType<typeof client>) => arrangeKey(api, { name: 'ci', callbackUrl: 'https://hooks.example.com/flow' })
    /** Beside the bootstrap key: "ci" and "ci two" of Main, "sales bot" of Sales and "second admin", oldest first. */
    const arrangeOrganizationKeys = async (tenant: Awaited<ReturnType<typeof arrangeTenant>>) => {
      const ci = await arrangeCi(tenant.api)
      await arrangeKey(tenant.api, { name: 'sales bot', callbackUrl: 'https://hooks.example.com/sales', workspaceId: tenant.salesWs })
      await arrangeKey(tenant.api, { name: 'second admin', callbackUrl: 'https://hooks.example.com/admin', role: 'organization-admin' })
      await arrangeKey(tenant.api, { name: 'ci two', callbackUrl: 'https://hooks.example.com/ci2' })
      return ci
    }

    await t.test('the bootstrapped key is listed without any secret', async (t) => {
      const { admin, api } = await arrangeTenant()
      const response = await api.get()
      t.equal(response.statusCode, 200)
      const page = response.json()
      t.same(page, {
        content: [
          {
            id: admin.apiKeyId,
            name: 'bootstrap',
            workspaceId: admin.workspaceId,
            role: 'organization-admin',
            callbackUrl: null,
            keyPrefix: admin.apiKey.slice(0, 10),
            createdAt: page.content[0].createdAt,
          },
        ],
        totalElements: 1,
        totalPages: 1,
        number: 0,
        size: 10,
        first: true,
        last: true,
      })
      t.match(page.content[0].createdAt, iso)
      t.notOk(response.body.includes(admin.apiKey), 'no key')
      t.notOk(response.body.includes(admin.signingSecret), 'no signing secret')
      t.notOk(response.body.includes(createHash('sha256').update(admin.apiKey).digest('hex')), 'no key hash')
    })

    await t.test('create with the defaults: a workspace key of the caller\'s workspace, secrets shown once', async (t) => {
      const { admin, api } = await arrangeTenant()
      const response = await api.create({ name: 'ci', callbackUrl: 'https://hooks.example.com/flow' })
      t.equal(response.statusCode, 201)
      const ci: CreatedKey = response.json()
      t.same(Object.keys(ci).sort(), [...RECORD_FIELDS, 'apiKey', 'signingSecret'].sort())
      t.match(ci, {
        id: uuidV7,
        name: 'ci',
        workspaceId: admin.workspaceId,
        role: 'workspace',
        callbackUrl: 'https://hooks.example.com/flow',
        createdAt: iso,
        apiKey: /^wh_[A-Za-z0-9_-]{43}$/,
        signingSecret: /^whsec_[A-Za-z0-9+/]{43}=$/,
      })
      t.equal(ci.keyPrefix, ci.apiKey.slice(0, 10))

      t.equal((await api.workspaces(ci.apiKey)).statusCode, 200, 'the new key works at once')
      const listed = await api.get()
      const { apiKey: _k, signingSecret: _s, ...record } = ci
      t.same(listed.json().content.find((k: KeyRecord) => k.id === ci.id), record, 'listed at once, as created minus its secrets')
      t.notOk(listed.body.includes(ci.apiKey) || listed.body.includes(ci.signingSecret), 'the list never carries secrets')

      const row = await storage.db.selectFrom('api_keys').selectAll().where('id', '=', ci.id).executeTakeFirstOrThrow()
      t.equal(row.key_hash, createHash('sha256').update(ci.apiKey).digest('hex'), 'only the SHA-256 of the key is stored')
      t.notOk(JSON.stringify(row).includes(ci.apiKey))
      t.match(row, { organization_id: admin.organizationId, workspace_id: admin.workspaceId, role: 'workspace', revoked_at: null })
    })

    await t.test('validation', async (t) => {
      const { api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      const before = (await api.list()).totalElements
      expectError(t, await api.create({ callbackUrl: 'https://hooks.example.com/flow' }), 400, /body must have required property 'name'/)
      expectError(t, await api.create({ name: 'x' }), 400, /body must have required property 'callbackUrl'/)
      expectError(t, await api.create({ name: '', callbackUrl: 'https://hooks.example.com/flow' }), 400, /body\/name must NOT have fewer than 1 characters/)
      expectError(t, await api.create({ name: 'x', callbackUrl: 42 }), 400, /body\/callbackUrl must be string/)
      expectError(t, await api.create({ name: 'x', callbackUrl: 'https://hooks.example.com/flow', workspaceId: 'nope' }), 400, /body\/workspaceId must match format "uuid"/)
      expectError(t, await api.create({ name: 'x', callbackUrl: 'https://hooks.example.com/flow', role: 'root' }), 400, /body\/role must be equal to one of the allowed values: workspace, organization-admin/)
      expectError(t, await api.patch(ci.id, { name: '' }), 400, /body\/name must NOT have fewer than 1 characters/)
      expectError(t, await api.patch('not-a-uuid', { name: 'x' }), 400, /params\/id must match format "uuid"/)
      expectError(t, await api.remove('not-a-uuid'), 400, /params\/id must match format "uuid"/)
      expectError(t, await api.get('?size=0'), 400, /querystring\/size must be >= 1/)
      expectError(t, await api.get('?size=101'), 400, /querystring\/size must be <= 100/)
      expectError(t, await api.get('?page=-1'), 400, /querystring\/page must be >= 0/)
      expectError(t, await api.get('?workspaceId=abc'), 400, /querystring\/workspaceId must match format "uuid"/)
      t.equal((await api.list()).totalElements, before, 'no refused call created a key')
    })

    await t.test('callback URLs that are not public https are refused on create and change', async (t) => {
      const { api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      const before = (await api.list()).totalElements
      for (const [url, reason] of refusedCallbacks) {
        expectError(t, await api.create({ name: 'evil', callbackUrl: url }), 400, reason)
        expectError(t, await api.patch(ci.id, { callbackUrl: url }), 400, reason)
      }
      t.equal((await api.list()).totalElements, before, 'no key was created')
      t.equal((await api.list()).content.find((k: KeyRecord) => k.id === ci.id).callbackUrl, 'https://hooks.example.com/flow', 'no callback was changed')
    })

    await t.test('an organization admin creates keys for any workspace of its organization, admin keys too', async (t) => {
      const { admin, salesWs, api } = await arrangeTenant()
      const response = await api.create({ name: 'sales bot', callbackUrl: 'https://hooks.example.com/sales', workspaceId: salesWs })
      t.equal(response.statusCode, 201)
      t.match(response.json(), { workspaceId: salesWs, role: 'workspace' })
      const adminKey = await api.create({ name: 'second admin', callbackUrl: 'https://hooks.example.com/admin', role: 'organization-admin' })
      t.equal(adminKey.statusCode, 201)
      t.match(adminKey.json(), { role: 'organization-admin', workspaceId: admin.workspaceId })
      expectError(t, await api.create({ name: 'x', callbackUrl: 'https://hooks.example.com/x', workspaceId: '0190a0b0-0000-7000-8000-00000000dead' }), 404, /workspace 0190a0b0-0000-7000-8000-00000000dead not found/)
    })

    await t.test('a workspace key manages only the workspace keys of its own workspace', async (t) => {
      const { admin, salesWs, api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      await arrangeKey(api, { name: 'sales bot', callbackUrl: 'https://hooks.example.com/sales', workspaceId: salesWs })
      await arrangeKey(api, { name: 'second admin', callbackUrl: 'https://hooks.example.com/admin', role: 'organization-admin' })
      const ws = client(testApp, ci.apiKey)
      const own = await ws.create({ name: 'ci 2', callbackUrl: 'https://hooks.example.com/ci2', workspaceId: admin.workspaceId })
      t.equal(own.statusCode, 201)
      t.match(own.json(), { workspaceId: admin.workspaceId, role: 'workspace' })
      expectError(t, await ws.create({ name: 'x', callbackUrl: 'https://hooks.example.com/x', workspaceId: salesWs }), 403, /only create keys for its own workspace/)
      expectError(t, await ws.create({ name: 'x', callbackUrl: 'https://hooks.example.com/x', workspaceId: '0190a0b0-0000-7000-8000-00000000dead' }), 403, /only create keys for its own workspace/)
      expectError(t, await ws.create({ name: 'x', callbackUrl: 'https://hooks.example.com/x', role: 'organization-admin' }), 403, /Only an organization-admin API key can create organization-admin keys/)

      const visible = await ws.list('?size=100')
      t.same(visible.content.map((k: KeyRecord) => k.name), ['ci', 'ci 2'], "its workspace's workspace keys, oldest first: not the admin keys, not Sales' keys")
      t.ok(visible.content.every((k: KeyRecord) => k.role === 'workspace' && k.workspaceId === admin.workspaceId))
      t.same((await ws.list(`?workspaceId=${salesWs}`)).content, [], 'a filter cannot widen its reach')

      expectError(t, await ws.patch(admin.apiKeyId, { name: 'pwned' }), 404, new RegExp(`API key ${admin.apiKeyId} not found`))
      expectError(t, await ws.remove(admin.apiKeyId), 404, /not found/)
      const salesKey = (await api.list(`?workspaceId=${salesWs}`)).content[0] as KeyRecord
      expectError(t, await ws.patch(salesKey.id, { name: 'x' }), 404, /not found/)
      expectError(t, await ws.remove(salesKey.id), 404, /not found/)
      const renamed = await ws.patch(own.json().id, { name: 'ci two' })
      t.equal(renamed.statusCode, 200, 'it changes a sibling key')
      t.equal(renamed.json().name, 'ci two')
    })

    await t.test('the admin list spans the organization and filters by workspace', async (t) => {
      const tenant = await arrangeTenant()
      const { salesWs, api } = tenant
      await arrangeOrganizationKeys(tenant)
      const all = await api.list('?size=100')
      t.same(all.content.map((k: KeyRecord) => k.name), ['bootstrap', 'ci', 'sales bot', 'second admin', 'ci two'])
      const sales = await api.list(`?workspaceId=${salesWs}`)
      t.same(sales.content.map((k: KeyRecord) => k.name), ['sales bot'])
      t.equal(sales.totalElements, 1)
    })

    await t.test('page arithmetic', async (t) => {
      const tenant = await arrangeTenant()
      const { api } = tenant
      await arrangeOrganizationKeys(tenant)
      const first = await api.list('?size=2')
      t.match(first, { totalElements: 5, totalPages: 3, number: 0, size: 2, first: true, last: false })
      const second = await api.list('?size=2&page=1')
      t.match(second, { number: 1, first: false, last: false })
      const third = await api.list('?size=2&page=2')
      t.match(third, { number: 2, first: false, last: true })
      t.equal(third.content.length, 1)
      t.same(new Set([...ids(first), ...ids(second), ...ids(third)]).size, 5, 'the pages cover every key once')
      t.match(await api.list('?size=2&page=9'), { content: [], totalElements: 5, totalPages: 3, number: 9, last: true })
    })

    await t.test('change answers the whole record; an empty change answers it as it is', async (t) => {
      const { api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      const renamed = await api.patch(ci.id, { name: 'ci runner' })
      t.equal(renamed.statusCode, 200)
      const { apiKey: _k, signingSecret: _s, ...record } = ci
      t.same(renamed.json(), { ...record, name: 'ci runner' })
      const moved = await api.patch(ci.id, { callbackUrl: 'https://hooks.example.com/v2' })
      t.same(moved.json(), { ...record, name: 'ci runner', callbackUrl: 'https://hooks.example.com/v2' })
      t.same(Object.keys(moved.json()).sort(), RECORD_FIELDS, 'no secrets')
      const same = await api.patch(ci.id, {})
      t.equal(same.statusCode, 200)
      t.same(same.json(), moved.json())
      t.same((await api.list('?size=100')).content.find((k: KeyRecord) => k.id === ci.id), moved.json(), 'the list shows the change at once')
      expectError(t, await api.patch('0190a0b0-0000-7000-8000-00000000dead', { name: 'x' }), 404, /not found/)
      const events = await store.readStream(`apikey-${ci.id}`)
      t.same(events.map((e) => e.type), ['ApiKeyIssued', 'ApiKeyChanged', 'ApiKeyChanged'], 'the empty change appended nothing')
    })

    await t.test('a key cannot revoke itself', async (t) => {
      const { admin, api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      expectError(t, await api.remove(admin.apiKeyId), 409, /cannot revoke itself/)
      expectError(t, await client(testApp, ci.apiKey).remove(ci.id), 409, /cannot revoke itself/)
      t.equal((await api.workspaces(admin.apiKey)).statusCode, 200, 'it still works')
    })

    await t.test('delete revokes: 204, gone from the list, and 401 once the cache entry expires', async (t) => {
      const { api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      t.equal((await api.workspaces(ci.apiKey)).statusCode, 200, 'the key works and is cached')
      const response = await api.remove(ci.id)
      t.equal(response.statusCode, 204)
      t.equal(response.body, '')
      t.notOk(ids(await api.list('?size=100')).includes(ci.id), 'gone from the list')
      expectError(t, await api.remove(ci.id), 404, /not found/)
      expectError(t, await api.patch(ci.id, { name: 'back' }), 404, /not found/)
      expectError(t, await api.remove('0190a0b0-0000-7000-8000-00000000dead'), 404, /not found/)
      await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 50))
      expectError(t, await api.workspaces(ci.apiKey), 401, /Invalid API key/)
    })

    await t.test('another organization sees none of the first through any endpoint', async (t) => {
      const { admin, api } = await arrangeTenant()
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId, name: 'Globex main' })
      const globexKey = await issueApiKey(ctx, { organizationId, workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      const globex = client(testApp, globexKey.apiKey)
      t.same(ids(await globex.list('?size=100')), [globexKey.apiKeyId])
      t.same((await globex.list(`?workspaceId=${admin.workspaceId}`)).content, [])
      expectError(t, await globex.create({ name: 'x', callbackUrl: 'https://hooks.example.com/x', workspaceId: admin.workspaceId }), 404, /not found/)
      expectError(t, await globex.patch(admin.apiKeyId, { name: 'pwned' }), 404, /not found/)
      expectError(t, await globex.remove(admin.apiKeyId), 404, /not found/)
      const theirs = (await globex.create({ name: 'globex bot', callbackUrl: 'https://hooks.example.com/g' })).json()
      t.equal(theirs.workspaceId, workspaceId)
      t.notOk(ids(await api.list('?size=100')).includes(theirs.id), 'their keys stay out of our list')
      expectError(t, await api.patch(theirs.id, { name: 'x' }), 404, /not found/)
      expectError(t, await api.remove(theirs.id), 404, /not found/)
      t.equal((await api.list('?size=100')).content.find((k: KeyRecord) => k.id === admin.apiKeyId).name, 'bootstrap', 'our key is untouched')
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      const { admin, api } = await arrangeTenant()
      const ci = await arrangeCi(api)
      const changed = await arrangeKey(api, { name: 'ci 2', callbackUrl: 'https://hooks.example.com/ci2' })
      t.equal((await api.patch(changed.id, { name: 'ci two' })).statusCode, 200)
      t.equal((await api.remove(ci.id)).statusCode, 204)
      const snapshot = () => storage.db.selectFrom('api_keys').selectAll().orderBy('id').execute()
      const before = await snapshot()
      const ours = before.filter((row) => row.organization_id === admin.organizationId)
      t.ok(ours.some((row) => row.revoked_at !== null), 'the data set includes a revocation')
      t.ok(ours.some((row) => row.name === 'ci two'), 'and a change')
      await rebuildProjection(storage, store, apiKeysProjection)
      t.same(await snapshot(), before)
    })
  })

  t.test(`an allowed private range on ${backend.name}`, async (t) => {
    const testApp = await openTestApp(t, backend, { config: loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' }) })
    const api = client(testApp, testApp.admin.apiKey)
    const created = await api.create({ name: 'local receiver', callbackUrl: 'https://127.0.0.1:9443/hook' })
    t.equal(created.statusCode, 201)
    t.equal(created.json().callbackUrl, 'https://127.0.0.1:9443/hook')
    t.equal((await api.patch(created.json().id, { callbackUrl: 'https://2130706433:9443/other' })).statusCode, 200, 'any spelling of the allowed address')
    expectError(t, await api.create({ name: 'x', callbackUrl: 'https://127.0.0.2/hook' }), 400, /non-public address \(127\.0\.0\.2\)/)
    expectError(t, await api.create({ name: 'x', callbackUrl: 'https://10.0.0.1/hook' }), 400, /non-public address/)
    expectError(t, await api.create({ name: 'x', callbackUrl: 'https://localhost:9443/hook' }), 400, /localhost/)
    expectError(t, await api.create({ name: 'x', callbackUrl: 'http://127.0.0.1:9443/hook' }), 400, /https/)
  })
}
