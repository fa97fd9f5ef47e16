import t from 'tap'
import { issueApiKey, revokeApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

for (const backend of apiBackends) {
  t.test(`workspaces and API keys on ${backend.name}`, async (t) => {
    const { app, ctx } = await openTestApp(t, backend, { apiKeyCacheMs: 200 })
    const as = (key: string) => ({ 'x-api-key': key })
    let tenants = 0
    // Each subtest works in an organization of its own (one workspace, Main, and its admin key), so no count depends on another subtest.
    const arrangeTenant = () => bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })

    await t.test('the bootstrapped key lists its workspace in the page envelope', async (t) => {
      const admin = await arrangeTenant()
      const response = await app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(admin.apiKey) })
      t.equal(response.statusCode, 200)
      const body = response.json()
      t.same(Object.keys(body).sort(), ['content', 'first', 'last', 'number', 'size', 'totalElements', 'totalPages'])
      t.same(body, { content: [{ id: admin.workspaceId, name: 'Main', createdAt: body.content[0].createdAt }], totalElements: 1, totalPages: 1, number: 0, size: 10, first: true, last: true })
      t.same(Object.keys(body.content[0]).sort(), ['createdAt', 'id', 'name'], 'no timezone in listings')
      t.match(body.content[0].createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })

    await t.test('a created workspace is listed as soon as the create call answers', async (t) => {
      const admin = await arrangeTenant()
      const created = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: as(admin.apiKey), payload: { name: 'Sales', timezone: 'America/Sao_Paulo' } })
      t.equal(created.statusCode, 201)
      t.equal(created.body, '', 'empty body')
      const id = /^\/v1\/workspaces\/([0-9a-f-]{36})$/.exec(created.headers.location as string)?.[1]
      t.ok(id, 'Location names the new workspace')
      const list = (await app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(admin.apiKey) })).json()
      t.ok(list.content.some((w: { id: string; name: string }) => w.id === id && w.name === 'Sales'))
    })

    await t.test('an unknown time zone is refused', async (t) => {
      const admin = await arrangeTenant()
      const response = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: as(admin.apiKey), payload: { name: 'X', timezone: 'Mars/Olympus' } })
      t.equal(response.statusCode, 400)
      t.match(response.json().message, /Mars\/Olympus is not an IANA time zone/)
    })

    await t.test('page arithmetic: partial last page and a page past the end', async (t) => {
      const admin = await arrangeTenant()
      await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const page0 = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=1', headers: as(admin.apiKey) })).json()
      t.match(page0, { totalElements: 2, totalPages: 2, number: 0, size: 1, first: true, last: false })
      t.equal(page0.content.length, 1)
      const page1 = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=1&page=1', headers: as(admin.apiKey) })).json()
      t.match(page1, { number: 1, first: false, last: true })
      t.not(page1.content[0].id, page0.content[0].id)
      const beyond = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=1&page=5', headers: as(admin.apiKey) })).json()
      t.match(beyond, { content: [], totalElements: 2, number: 5, last: true })
    })

    await t.test('a workspace key cannot create workspaces', async (t) => {
      const admin = await arrangeTenant()
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name: 'ws', role: 'workspace', callbackUrl: null })
      const response = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: as(key.apiKey), payload: { name: 'Nope' } })
      t.equal(response.statusCode, 403)
      t.equal(response.json().error, 'Forbidden')
    })

    await t.test("a workspace key lists its own workspace only, not its organization's others", async (t) => {
      const admin = await arrangeTenant()
      await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Support' })
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 'support', role: 'workspace', callbackUrl: null })
      const own = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=100', headers: as(key.apiKey) })).json()
      t.same(own.content.map((w: { id: string }) => w.id), [workspaceId])
      t.equal(own.totalElements, 1)
      const all = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=100', headers: as(admin.apiKey) })).json()
      t.equal(all.totalElements, 3, 'the organization-admin key sees every workspace of the organization')
    })

    await t.test('another organization sees none of the first one', async (t) => {
      const admin = await arrangeTenant()
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId, name: 'Globex main' })
      const other = await issueApiKey(ctx, { organizationId, workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      const theirs = (await app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(other.apiKey) })).json()
      t.same(theirs.content.map((w: { name: string }) => w.name), ['Globex main'])
      const ours = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=100', headers: as(admin.apiKey) })).json()
      t.notOk(ours.content.some((w: { id: string }) => w.id === workspaceId))
    })

    await t.test('one workspace with its time zone: read, renamed, moved to another zone and back to UTC', async (t) => {
      const admin = await arrangeTenant()
      const created = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: as(admin.apiKey), payload: { name: 'Sales', timezone: 'America/Sao_Paulo' } })
      const location = String(created.headers.location)
      const read = await app.inject({ method: 'GET', url: location, headers: as(admin.apiKey) })
      t.equal(read.statusCode, 200, 'the Location of a new workspace answers')
      t.match(read.json(), { id: location.split('/').at(-1), name: 'Sales', timezone: 'America/Sao_Paulo', createdAt: /^\d{4}-\d\d-\d\dT/ })
      t.same(Object.keys(read.json()).sort(), ['createdAt', 'id', 'name', 'timezone'])

      const patch = (payload: object, key = admin.apiKey) => app.inject({ method: 'PATCH', url: location, headers: as(key), payload })
      const renamed = await patch({ name: 'Sales Brazil' })
      t.equal(renamed.statusCode, 200)
      t.match(renamed.json(), { name: 'Sales Brazil', timezone: 'America/Sao_Paulo' }, 'a new name; the zone stays')
      t.match((await patch({ timezone: 'Asia/Kolkata' })).json(), { name: 'Sales Brazil', timezone: 'Asia/Kolkata' }, 'a new zone; the name stays')
      t.match((await patch({ timezone: null })).json(), { timezone: null }, 'null: back to UTC')
      const listed = (await app.inject({ method: 'GET', url: '/v1/workspaces?size=100', headers: as(admin.apiKey) })).json()
      t.ok(listed.content.some((w: { name: string }) => w.name === 'Sales Brazil'), 'the list has the new name at once')
      const flow = await app.inject({ method: 'POST', url: '/v1/flows', headers: { ...as(admin.apiKey), 'x-workspace-id': location.split('/').at(-1)! }, payload: { name: 'Leads' } })
      const flows = (await app.inject({ method: 'GET', url: `/v1/flows?workspaceName=brazil`, headers: as(admin.apiKey) })).json()
      t.same(flows.content.map((f: { id: string }) => `/v1/flows/${f.id}`), [flow.headers.location], "the flows list filters by the workspace's new name")

      const bad = await patch({ timezone: 'Mars/Olympus' })
      t.equal(bad.statusCode, 400)
      t.match(bad.json(), { statusCode: 400, error: 'Bad Request', message: /Mars\/Olympus is not an IANA time zone/ })
      t.equal((await patch({ name: '' })).statusCode, 400, 'an empty name')
    })

    await t.test("a workspace key reads its own workspace only and changes none; another organization's is not found", async (t) => {
      const admin = await arrangeTenant()
      const { workspaceId: sales } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name: 'main', role: 'workspace', callbackUrl: null })
      t.equal((await app.inject({ method: 'GET', url: `/v1/workspaces/${admin.workspaceId}`, headers: as(key.apiKey) })).statusCode, 200, 'its own')
      t.equal((await app.inject({ method: 'GET', url: `/v1/workspaces/${sales}`, headers: as(key.apiKey) })).statusCode, 404, "another of its organization's")
      const own = await app.inject({ method: 'PATCH', url: `/v1/workspaces/${admin.workspaceId}`, headers: as(key.apiKey), payload: { name: 'Mine' } })
      t.equal(own.statusCode, 403)
      t.match(own.json(), { error: 'Forbidden', message: /organization-admin/ })
      const other = await arrangeTenant()
      for (const method of ['GET', 'PATCH'] as const) {
        const response = await app.inject({ method, url: `/v1/workspaces/${sales}`, headers: as(other.apiKey), ...(method === 'PATCH' ? { payload: { name: 'Taken' } } : {}) })
        t.equal(response.statusCode, 404, `${method} by another organization's admin`)
      }
      t.match((await app.inject({ method: 'GET', url: `/v1/workspaces/${sales}`, headers: as(admin.apiKey) })).json(), { name: 'Sales' }, 'unchanged')
    })

    await t.test('a revoked key stops working once the cache entry expires', async (t) => {
      const admin = await arrangeTenant()
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name: 'temp', role: 'workspace', callbackUrl: null })
      t.equal((await app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(key.apiKey) })).statusCode, 200)
      await revokeApiKey(ctx, key.apiKeyId)
      await new Promise((resolve) => setTimeout(resolve, 250))
      const response = await app.inject({ method: 'GET', url: '/v1/workspaces', headers: as(key.apiKey) })
      t.equal(response.statusCode, 401)
    })

    await t.test('health and readiness', async (t) => {
      t.same((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
      const ready = await app.inject({ method: 'GET', url: '/readyz' })
      t.equal(ready.statusCode, 200)
      t.equal(ready.json().status, 'ready')
    })
  })
}
