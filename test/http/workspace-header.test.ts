import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

// An organization-admin key acts in any workspace of its organization with X-Workspace-Id; without
// the header, or with its own workspace's id, in its own.

for (const backend of apiBackends) {
  t.test(`X-Workspace-Id on ${backend.name}`, async (t) => {
    const { app, ctx } = await openTestApp(t, backend)
    const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
    const { workspaceId: sales } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
    const call = (method: 'GET' | 'POST', url: string, { key = admin.apiKey, workspace, payload }: { key?: string; workspace?: string; payload?: object } = {}) =>
      app.inject({ method, url, headers: { 'x-api-key': key, ...(workspace ? { 'x-workspace-id': workspace } : {}) }, ...(payload ? { payload } : {}) })
    const ids = async (url: string, workspace?: string) => ((await call('GET', url, { workspace })).json().content as { id?: string; clientId?: string }[]).map((row) => row.id ?? row.clientId)

    await t.test('what an admin makes with the header is in that workspace, and only there', async (t) => {
      const made: Record<string, { list: string; id: string }> = {}
      const location = (response: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string) => {
        t.equal(response.statusCode, 201, `${what} created: ${response.body.slice(0, 200)}`)
        return String(response.headers.location).split('/').at(-1)!
      }
      made.sector = { list: '/v1/sectors', id: location(await call('POST', '/v1/sectors', { workspace: sales, payload: { name: 'Inside sales' } }), 'sector') }
      made.variable = { list: '/v1/variables', id: (await call('POST', '/v1/variables', { workspace: sales, payload: { name: 'plan', type: 'string' } })).json().id }
      // The flows list spans the organization: the flow's workspace is checked below.
      const flowId = location(await call('POST', '/v1/flows', { workspace: sales, payload: { name: 'Leads' } }), 'flow')
      const pipeline = await call('POST', '/v1/kanban/pipelines', { workspace: sales, payload: { name: 'Deals', stages: [{ name: 'Lead' }] } })
      made.pipeline = { list: '/v1/kanban/pipelines', id: location(pipeline, 'pipeline') }
      // An admin's key list spans the organization: the key's workspace is checked below.
      const key = (await call('POST', '/v1/api-keys', { workspace: sales, payload: { name: 'sales bot', callbackUrl: 'https://hooks.example.com/flow' } })).json()
      const client = await call('POST', '/v1/clients', { workspace: sales, payload: { name: 'Sales portal' } })
      t.equal(client.statusCode, 201, `client created: ${client.body.slice(0, 200)}`)
      made.client = { list: '/v1/clients', id: client.json().clientId }

      for (const [what, { list, id }] of Object.entries(made)) {
        t.ok(id, `${what} has an id`)
        t.ok((await ids(list, sales)).includes(id), `the ${what} is listed in Sales`)
        t.notOk((await ids(list)).includes(id), `and not in the key's own workspace`)
      }
      const card = await call('POST', `/v1/kanban/pipelines/${made.pipeline.id}/cards`, { workspace: sales, payload: { stageId: pipeline.json().stages[0].id } })
      t.equal(card.statusCode, 201, 'a card in the Sales pipeline')
      t.equal((await call('GET', `/v1/kanban/pipelines/${made.pipeline.id}`)).statusCode, 404, "the pipeline is out of the own workspace's reach")

      const keys = (await call('GET', '/v1/api-keys?size=100')).json().content as { id: string; workspaceId: string }[]
      t.equal(keys.find((listed) => listed.id === key.id)?.workspaceId, sales, 'the API key belongs to Sales')
      const flows = (await call('GET', `/v1/flows?workspaceId=${sales}`)).json()
      t.same(flows.content.map((f: { id: string; workspace: { name: string } }) => [f.id, f.workspace.name]), [[flowId, 'Sales']], 'the flow belongs to Sales')
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sales, name: 'sales', role: 'workspace', callbackUrl: null })
      t.ok((await ids('/v1/sectors')).length === 0 && (await call('GET', '/v1/sectors', { key: salesKey.apiKey })).json().content.length === 1, "Sales' own key sees the sector; Main has none")
    })

    await t.test("the key's own workspace id is the same as no header", async (t) => {
      t.equal((await call('GET', '/v1/sectors', { workspace: admin.workspaceId })).statusCode, 200)
    })

    await t.test('a workspace key naming another workspace of its organization: 403', async (t) => {
      const key = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name: 'main', role: 'workspace', callbackUrl: null })
      const response = await call('GET', '/v1/sectors', { key: key.apiKey, workspace: sales })
      t.equal(response.statusCode, 403)
      t.match(response.json(), { statusCode: 403, error: 'Forbidden', message: /organization-admin/ })
    })

    await t.test("a workspace of another organization, or none: 404, as any record out of reach", async (t) => {
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const { workspaceId: globex } = await createWorkspace(ctx, { organizationId, name: 'Globex main' })
      for (const workspace of [globex, '0190a0b0-0000-7000-8000-00000000dead']) {
        const response = await call('POST', '/v1/sectors', { workspace, payload: { name: 'Intruders' } })
        t.equal(response.statusCode, 404)
        t.match(response.json(), { statusCode: 404, error: 'Not Found', message: `workspace ${workspace} not found` })
      }
      t.same(await ids('/v1/sectors', undefined), [], 'nothing was made anywhere')
    })

    await t.test('a malformed workspace id: 400 in the error shape', async (t) => {
      const response = await call('GET', '/v1/sectors', { workspace: 'sales' })
      t.equal(response.statusCode, 400)
      t.same(response.json(), { statusCode: 400, error: 'Bad Request', message: 'headers/x-workspace-id must be a workspace id (UUID)' })
    })

    await t.test('the dashboard session acts as its key does', async (t) => {
      const link = await app.inject({ method: 'POST', url: '/auth/session', payload: { apiKey: admin.apiKey } })
      t.equal(link.statusCode, 201, `signed in: ${link.body.slice(0, 200)}`)
      const cookie = String(link.headers['set-cookie']).split(';')[0]!
      const listed = await app.inject({ method: 'GET', url: '/v1/sectors', headers: { cookie, 'x-workspace-id': sales } })
      t.same(listed.json().content.map((s: { name: string }) => s.name), ['Inside sales'])
    })

    await t.test('the OpenAPI document offers the header on workspace routes, not on the organization\'s workspaces', async (t) => {
      const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
      const headerOf = (path: string, method: string) => document.paths[path][method].parameters?.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-workspace-id')
      t.match(headerOf('/v1/sectors', 'get'), { required: false, schema: { format: 'uuid' } })
      t.ok(headerOf('/v1/sessions/flows/{flowId}/create', 'post'))
      t.notOk(headerOf('/v1/workspaces', 'get'))
    })
  })
}
