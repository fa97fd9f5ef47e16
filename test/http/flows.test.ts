import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { flowsProjection } from '../../src/projections/flows.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const isoMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

for (const backend of apiBackends) {
  t.test(`flows on ${backend.name}`, async (t) => {
    let clock = new Date('2026-03-01T10:00:00.000Z')
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now: () => clock })
    const as = (key: string) => ({ 'x-api-key': key })
    let tenants = 0
    // Each subtest works in an organization of its own, starting on the morning of 2026-03-01, so no
    // list depends on another subtest.
    const arrangeTenant = async () => {
      clock = new Date('2026-03-01T10:00:00.000Z')
      const admin = await bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })
      const create = (payload: unknown, key = admin.apiKey) => app.inject({ method: 'POST', url: '/v1/flows', headers: as(key), payload: payload as object })
      const list = async (query = '', key = admin.apiKey) => {
        const response = await app.inject({ method: 'GET', url: `/v1/flows${query}`, headers: as(key) })
        t.equal(response.statusCode, 200, `GET /v1/flows${query}`)
        return response.json()
      }
      const arrangeFlow = async (name: string, key = admin.apiKey): Promise<{ id: string }> => {
        const response = await create({ name }, key)
        if (response.statusCode !== 201) throw new Error(`arranging flow ${name} answered ${response.statusCode}`)
        return response.json()
      }
      return { admin, create, list, arrangeFlow }
    }
    /** Flows across time and workspaces, for the filters; the clock is left at 2026-03-10T16:00Z. */
    const arrangeCatalog = async () => {
      const tenant = await arrangeTenant()
      const { admin, arrangeFlow } = tenant
      const sales = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales Team', timezone: 'Asia/Tokyo' })
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sales.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      await arrangeFlow('Welcome')
      await arrangeFlow('Greeter')
      clock = new Date('2026-03-08T09:00:00.000Z')
      await arrangeFlow('Alpha', salesKey.apiKey)
      clock = new Date('2026-03-10T12:00:00.000Z')
      await arrangeFlow('Zulu', salesKey.apiKey)
      await arrangeFlow('Mike')
      clock = new Date('2026-03-10T16:00:00.000Z')
      return { ...tenant, sales, salesKey }
    }
    const names = (page: { content: { name: string }[] }) => page.content.map((f) => f.name)

    await t.test('create answers 201 with the flow, published as version 1 with a Start → End default', async (t) => {
      const { admin, create } = await arrangeTenant()
      const response = await create({ name: 'Welcome' })
      t.equal(response.statusCode, 201)
      const flow = response.json()
      t.equal(response.headers.location, `/v1/flows/${flow.id}`)
      t.same(Object.keys(flow).sort(), ['createdAt', 'definition', 'draftVersion', 'id', 'name', 'publishedVersion', 'release', 'updatedAt', 'workspace'])
      t.match(flow, { name: 'Welcome', publishedVersion: 1, workspace: { id: admin.workspaceId, name: 'Main' }, createdAt: '2026-03-01T10:00:00.000Z' })
      t.match(flow.createdAt, isoMs)
      t.same(flow.definition.nodes.map((n: { type: string }) => n.type), ['start', 'end'])
      t.same((await app.inject({ method: 'GET', url: `/v1/flows/${flow.id}`, headers: as(admin.apiKey) })).json(), flow, 'GET by id answers the same record')
    })

    await t.test('a given definition is kept; a malformed one is refused', async (t) => {
      const { create } = await arrangeTenant()
      const definition = {
        schemaVersion: 1,
        nodes: [
          { id: 's', type: 'start', position: { x: 0, y: 0 }, data: {} },
          { id: 'hi', type: 'message', position: { x: 200, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Hi' } }] } },
        ],
        edges: [{ id: 'e', source: 's', target: 'hi' }],
      }
      const response = await create({ name: 'Greeter', definition })
      t.equal(response.statusCode, 201)
      t.same(response.json().definition, definition)
      const wrongVersion = await create({ name: 'Bad', definition: { ...definition, schemaVersion: 2 } })
      t.equal(wrongVersion.statusCode, 400)
      t.same(wrongVersion.json(), {
        statusCode: 400,
        message: 'schemaVersion: must be 1',
        error: 'Bad Request',
        problems: [{ path: 'schemaVersion', message: 'must be 1' }],
      })
      const noNodes = await create({ name: 'Bad', definition: { schemaVersion: 1, edges: [] } })
      t.equal(noNodes.statusCode, 400)
      t.equal(noNodes.json().message, 'nodes: is required')
      const noStart = await create({ name: 'Bad', definition: { ...definition, nodes: definition.nodes.slice(1), edges: [] } })
      t.equal(noStart.statusCode, 400)
      t.equal(noStart.json().message, 'nodes: no start node; a flow has exactly one')
      const noName = await create({})
      t.equal(noName.statusCode, 400)
      t.match(noName.json().message, /body must have required property 'name'/)
    })

    await t.test('a kanbanMove whose tags or values its card would refuse is a 400 naming each one at its path', async (t) => {
      const { admin, create, list } = await arrangeTenant()
      const pipelineResponse = await app.inject({
        method: 'POST',
        url: '/v1/kanban/pipelines',
        headers: as(admin.apiKey),
        payload: { name: 'Leads', stages: [{ name: 'New' }], fields: [{ name: 'Amount', type: 'number' }, { name: 'Note', type: 'text' }] },
      })
      t.equal(pipelineResponse.statusCode, 201)
      const pipeline = pipelineResponse.json()
      const [amount, note] = pipeline.fields.map((f: { id: string }) => f.id)
      const moving = (data: Record<string, unknown>) => ({
        schemaVersion: 1,
        nodes: [
          { id: 's', type: 'start', position: { x: 0, y: 0 }, data: {} },
          { id: 'lead', type: 'kanbanMove', position: { x: 200, y: 0 }, data: { pipelineId: pipeline.id, stageId: pipeline.stages[0].id, ...data } },
        ],
        edges: [{ id: 'e', source: 's', target: 'lead' }],
      })
      const validate = async (data: Record<string, unknown>) =>
        (await app.inject({ method: 'POST', url: '/v1/flows/validate', headers: as(admin.apiKey), payload: { definition: moving(data) } })).json()
      t.same(await validate({ values: { [amount]: 10, [note]: 'from {{lastMessage}}' }, tags: ['lead'] }), { valid: true, problems: [] })

      const badTags = await create({ name: 'Bad tags', definition: moving({ tags: ['a,b', 'x'.repeat(101), 'lead', 'lead'] }) })
      t.equal(badTags.statusCode, 400)
      t.same(badTags.json().problems, [
        { path: 'nodes[1].data.tags[0]', message: 'must have no commas and no blanks at either end' },
        { path: 'nodes[1].data.tags[1]', message: 'longer than 100 characters' },
        { path: 'nodes[1].data.tags', message: 'must not repeat an item; "lead" is there more than once' },
      ])
      const badValue = await create({ name: 'Bad value', definition: moving({ values: { [amount]: '{{lastMessage}}' } }) })
      t.equal(badValue.statusCode, 400)
      t.same(badValue.json().problems, [{ path: `nodes[1].data.values["${amount}"]`, message: 'field "Amount" (number) takes a number; a value with {{…}} is text' }])
      t.equal((await list('?size=100')).content.filter((f: { name: string }) => f.name.startsWith('Bad ')).length, 0, 'neither flow was saved')
    })

    await t.test('the list item has exactly the spec fields; defaults are page 0, size 10, createdAt ascending', async (t) => {
      const { list, arrangeFlow } = await arrangeTenant()
      await arrangeFlow('Welcome')
      await arrangeFlow('Greeter')
      const page = await list()
      t.match(page, { totalElements: 2, totalPages: 1, number: 0, size: 10, first: true, last: true })
      t.same(Object.keys(page.content[0]).sort(), ['createdAt', 'id', 'name', 'updatedAt', 'workspace'])
      t.same(Object.keys(page.content[0].workspace).sort(), ['id', 'name'])
      t.same(names(page), ['Welcome', 'Greeter'])
    })

    await t.test('the list spans the organization; workspace filters narrow it', async (t) => {
      const { list, sales } = await arrangeCatalog()
      t.same(names(await list('?size=100')), ['Welcome', 'Greeter', 'Alpha', 'Zulu', 'Mike'])
      t.same(names(await list(`?workspaceId=${sales.workspaceId}`)), ['Alpha', 'Zulu'])
      t.same(names(await list('?workspaceName=sales')), ['Alpha', 'Zulu'], 'part of the name, any case')
      t.same(names(await list('?workspaceName=nothing%25like')), [], 'LIKE wildcards are taken literally')
      t.same((await list(`?workspaceId=${sales.workspaceId}`)).content[0].workspace, { id: sales.workspaceId, name: 'Sales Team' })
    })

    await t.test('orderBy and direction', async (t) => {
      const { list } = await arrangeCatalog()
      t.same(names(await list('?orderBy=name')), ['Alpha', 'Greeter', 'Mike', 'Welcome', 'Zulu'])
      t.same(names(await list('?orderBy=name&direction=DESC')), ['Zulu', 'Welcome', 'Mike', 'Greeter', 'Alpha'])
      t.same(names(await list('?direction=DESC')), ['Mike', 'Zulu', 'Alpha', 'Greeter', 'Welcome'])
      t.same(names(await list('?orderBy=updatedAt&size=2&page=1')), ['Alpha', 'Zulu'])
    })

    await t.test('dateRange counts calendar days in UTC, or in the zone of the filtered workspace', async (t) => {
      const { list, sales } = await arrangeCatalog()
      t.same(names(await list('?dateRange=today')), ['Zulu', 'Mike'])
      t.same(names(await list('?dateRange=last7days')), ['Alpha', 'Zulu', 'Mike'])
      t.same(names(await list('?dateRange=last15days')), ['Welcome', 'Greeter', 'Alpha', 'Zulu', 'Mike'])
      // 16:00 UTC on the 10th is already the 11th in Tokyo: "today" there began at 15:00 UTC.
      t.same(names(await list(`?dateRange=today&workspaceId=${sales.workspaceId}`)), [])
      t.same(names(await list(`?dateRange=last7days&workspaceId=${sales.workspaceId}`)), ['Alpha', 'Zulu'])
    })

    await t.test('bad list parameters are 400 naming what is allowed', async (t) => {
      const { admin } = await arrangeTenant()
      const cases: [string, RegExp][] = [
        ['?orderBy=color', /querystring\/orderBy must be equal to one of the allowed values: name, createdAt, updatedAt/],
        ['?direction=UP', /querystring\/direction must be equal to one of the allowed values: ASC, DESC/],
        ['?dateRange=yesterday', /querystring\/dateRange must be equal to one of the allowed values: today, last7days, last15days, last30days/],
        ['?workspaceId=abc', /querystring\/workspaceId must match format "uuid"/],
        ['?size=101', /querystring\/size must be <= 100/],
        ['?size=0', /querystring\/size must be >= 1/],
        ['?page=-1', /querystring\/page must be >= 0/],
      ]
      for (const [query, message] of cases) {
        const response = await app.inject({ method: 'GET', url: `/v1/flows${query}`, headers: as(admin.apiKey) })
        t.equal(response.statusCode, 400, query)
        t.match(response.json().message, message, query)
      }
    })

    await t.test('single flows are read in the key’s own workspace only; other organizations see nothing', async (t) => {
      const { admin, list, arrangeFlow } = await arrangeTenant()
      const { id: welcomeId } = await arrangeFlow('Welcome')
      const sales = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales Team', timezone: 'Asia/Tokyo' })
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sales.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      t.equal((await app.inject({ method: 'GET', url: `/v1/flows/${welcomeId}`, headers: as(salesKey.apiKey) })).statusCode, 404)
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const ws = await createWorkspace(ctx, { organizationId, name: 'G' })
      const stranger = await issueApiKey(ctx, { organizationId, workspaceId: ws.workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      t.same((await list('', stranger.apiKey)).content, [])
      t.same((await list(`?workspaceId=${admin.workspaceId}`, stranger.apiKey)).content, [], 'filtering by a foreign workspace finds nothing')
      const response = await app.inject({ method: 'GET', url: `/v1/flows/${welcomeId}`, headers: as(stranger.apiKey) })
      t.equal(response.statusCode, 404)
      t.same(response.json(), { statusCode: 404, message: `flow ${welcomeId} not found`, error: 'Not Found' })
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      await arrangeCatalog()
      const before = await storage.db.selectFrom('flows').selectAll().orderBy('id').execute()
      await rebuildProjection(storage, store, flowsProjection)
      t.same(await storage.db.selectFrom('flows').selectAll().orderBy('id').execute(), before)
    })

    await t.test('a draft with properties the format does not name is a 400 naming them, never a 500', async (t) => {
      const { admin, create } = await arrangeTenant()
      const created = (await create({ name: 'Extras' })).json()
      const definition = { ...created.definition, layout: { zoom: 2 }, nodes: created.definition.nodes.map((node: object, i: number) => (i === 0 ? { ...node, note: 'mine' } : node)) }
      const saved = await app.inject({ method: 'PUT', url: `/v1/flows/${created.id}/definition`, headers: as(admin.apiKey), payload: definition })
      t.equal(saved.statusCode, 400)
      t.same(
        saved.json().problems.map((problem: { path: string }) => problem.path),
        ['nodes[0].note', 'layout'],
      )
      const onCreate = await create({ name: 'Extras too', definition })
      t.equal(onCreate.statusCode, 400)
    })
  })
}
