import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createPipeline } from '../../src/commands/kanban.js'
import { createSector, deleteSector } from '../../src/commands/sectors.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { flowsProjection } from '../../src/projections/flows.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const unknownId = '0190a0b0-0000-7000-8000-00000000dead'
const DETAIL_KEYS = ['createdAt', 'definition', 'draftVersion', 'id', 'name', 'publishedVersion', 'release', 'updatedAt', 'workspace']
const PAGE_KEYS = ['content', 'first', 'last', 'number', 'size', 'totalElements', 'totalPages']

const at = { x: 0, y: 0 }
const greeter = (body: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: at, data: {} },
    { id: 'hi', type: 'message', position: { x: 240, y: 0 }, data: { messages: [{ type: 'text', text: { body } }] } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'hi' }],
})
/** Start → a button question with a title over WhatsApp's limit, and an edge to nowhere. */
const broken = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: at, data: {} },
    {
      id: 'ask',
      type: 'question',
      position: at,
      data: {
        prompt: { type: 'interactive', interactive: { type: 'button', body: { text: 'Plan?' }, action: { buttons: [{ id: 'a', title: 'An extremely long title' }] } } },
        input: { kind: 'choice' },
      },
    },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'a', target: 'x' },
  ],
}
const brokenProblems = [
  { path: 'nodes[1].data.prompt.interactive.action.buttons[0].title', message: 'longer than 20 characters' },
  { path: 'edges[1].target', message: 'no node "x"' },
]
const brokenMessage = 'nodes[1].data.prompt.interactive.action.buttons[0].title: longer than 20 characters; edges[1].target: no node "x"'

for (const backend of apiBackends) {
  t.test(`flow drafts, versions and publishing on ${backend.name}`, async (t) => {
    let clock = new Date('2026-05-01T10:00:00.000Z')
    const tick = () => (clock = new Date(clock.getTime() + 60_000))
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now: () => clock })
    const as = (key: string) => ({ 'x-api-key': key })
    let tenants = 0
    /**
     * The Greeter flow, created at 10:00 in an organization of its own (workspaces Main and Sales, and
     * a stranger organization beside it), brought to a point of its story: its draft saved at 10:01
     * (10:02 is the minute of a refused draft), published as version 2 at 10:03, then (10:04 is the
     * minute of an unchanged publish) versions 3 and 4 at 10:05 and 10:06.
     */
    const arrangeFlow = async (stage: 'created' | 'drafted' | 'published' | 'four versions' = 'created') => {
      clock = new Date('2026-05-01T10:00:00.000Z')
      const admin = await bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })
      const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown, key = admin.apiKey) =>
        app.inject({ method, url, headers: as(key), ...(payload !== undefined && { payload: payload as object }) })
      const arranged = async (step: ReturnType<typeof call>) => {
        const response = await step
        if (response.statusCode !== 200 && response.statusCode !== 201) throw new Error(`arranging the flow answered ${response.statusCode}`)
        return response
      }
      const created = await arranged(call('POST', '/v1/flows', { name: 'Greeter', definition: greeter('Hi') }))
      const flowId: string = created.json().id
      const url = `/v1/flows/${flowId}`
      if (stage !== 'created') {
        tick()
        await arranged(call('PUT', `${url}/definition`, greeter('Hello there')))
        tick()
      }
      if (stage === 'published' || stage === 'four versions') {
        tick()
        await arranged(call('POST', `${url}/publish`))
      }
      if (stage === 'four versions') {
        tick()
        for (const body of ['v3', 'v4']) {
          tick()
          await arranged(call('PUT', `${url}/definition`, greeter(body)))
          await arranged(call('POST', `${url}/publish`))
        }
      }
      const sales = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sales.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const globex = await createWorkspace(ctx, { organizationId, name: 'G' })
      const stranger = await issueApiKey(ctx, { organizationId, workspaceId: globex.workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      return { admin, call, flowId, url, salesKey, stranger }
    }

    await t.test('a new flow has version 1: its first definition', async (t) => {
      const { call, url } = await arrangeFlow()
      const page = (await call('GET', `${url}/versions`)).json()
      t.same(Object.keys(page).sort(), PAGE_KEYS)
      t.same(page, { content: [{ version: 1, publishedAt: '2026-05-01T10:00:00.000Z', share: 100 }], totalElements: 1, totalPages: 1, number: 0, size: 10, first: true, last: true })
      const v1 = await call('GET', `${url}/versions/1`)
      t.equal(v1.statusCode, 200)
      t.same(v1.json(), { version: 1, publishedAt: '2026-05-01T10:00:00.000Z', share: 100, definition: greeter('Hi') })
    })

    await t.test('PUT definition saves the draft; the published version stays', async (t) => {
      const { call, flowId, url } = await arrangeFlow()
      tick()
      const response = await call('PUT', `${url}/definition`, greeter('Hello there'))
      t.equal(response.statusCode, 200)
      const flow = response.json()
      t.same(Object.keys(flow).sort(), DETAIL_KEYS)
      t.match(flow, { id: flowId, name: 'Greeter', publishedVersion: 1, updatedAt: '2026-05-01T10:01:00.000Z', createdAt: '2026-05-01T10:00:00.000Z' })
      t.same(flow.definition, greeter('Hello there'))
      t.same((await call('GET', url)).json(), flow)
      t.same((await call('GET', `${url}/versions/1`)).json().definition, greeter('Hi'))
      const listed = (await call('GET', '/v1/flows')).json().content.find((f: { id: string }) => f.id === flowId)
      t.equal(listed.updatedAt, '2026-05-01T10:01:00.000Z', 'the flow list shows the new updatedAt')
    })

    await t.test('an invalid draft is refused with every problem, and the draft is kept', async (t) => {
      const { call, url } = await arrangeFlow('drafted')
      tick()
      const response = await call('PUT', `${url}/definition`, broken)
      t.equal(response.statusCode, 400)
      t.same(response.json(), { statusCode: 400, message: brokenMessage, error: 'Bad Request', problems: brokenProblems })
      const notObject = await call('PUT', `${url}/definition`, ['nodes'])
      t.equal(notObject.statusCode, 400)
      t.same(notObject.json().problems, [{ path: '', message: 'the definition must be a JSON object' }])
      const flow = (await call('GET', url)).json()
      t.same(flow.definition, greeter('Hello there'))
      t.equal(flow.updatedAt, '2026-05-01T10:01:00.000Z')
    })

    await t.test('publish freezes the draft as the next version', async (t) => {
      const { call, url } = await arrangeFlow('drafted')
      tick()
      const response = await call('POST', `${url}/publish`)
      t.equal(response.statusCode, 200)
      t.same(response.json(), { version: 2, publishedAt: '2026-05-01T10:03:00.000Z', release: { liveVersion: 2, gradual: null } })
      t.match((await call('GET', url)).json(), { publishedVersion: 2, updatedAt: '2026-05-01T10:03:00.000Z' })
      t.same((await call('GET', `${url}/versions/2`)).json(), { version: 2, publishedAt: '2026-05-01T10:03:00.000Z', share: 100, definition: greeter('Hello there') })
      t.same((await call('GET', `${url}/versions`)).json().content, [
        { version: 2, publishedAt: '2026-05-01T10:03:00.000Z', share: 100 },
        { version: 1, publishedAt: '2026-05-01T10:00:00.000Z', share: 0 },
      ], 'newest first, the newest taking every new session')
    })

    await t.test('publishing an unchanged draft answers the newest version and adds none', async (t) => {
      const { call, url } = await arrangeFlow('published')
      tick()
      const again = await call('POST', `${url}/publish`)
      t.equal(again.statusCode, 200)
      t.same(again.json(), { version: 2, publishedAt: '2026-05-01T10:03:00.000Z', release: { liveVersion: 2, gradual: null } })
      t.equal((await call('GET', `${url}/versions`)).json().totalElements, 2)
      t.equal((await call('PUT', `${url}/definition`, greeter('Hello there'))).statusCode, 200)
      t.equal((await call('GET', url)).json().updatedAt, '2026-05-01T10:03:00.000Z', 'saving the same draft changes nothing')
    })

    await t.test('versions page like every list; a version that does not exist is 404', async (t) => {
      const { call, flowId, url } = await arrangeFlow('published')
      tick()
      for (const body of ['v3', 'v4']) {
        tick()
        t.equal((await call('PUT', `${url}/definition`, greeter(body))).statusCode, 200)
        t.equal((await call('POST', `${url}/publish`)).statusCode, 200)
      }
      const page = (await call('GET', `${url}/versions?size=2&page=1`)).json()
      t.same(page.content.map((v: { version: number }) => v.version), [2, 1])
      t.match(page, { totalElements: 4, totalPages: 2, number: 1, size: 2, first: false, last: true })
      for (const query of ['?size=0', '?size=101', '?page=-1']) t.equal((await call('GET', `${url}/versions${query}`)).statusCode, 400, query)
      const missing = await call('GET', `${url}/versions/5`)
      t.equal(missing.statusCode, 404)
      t.same(missing.json(), { statusCode: 404, message: `flow ${flowId} has no version 5`, error: 'Not Found' })
      t.equal((await call('GET', `${url}/versions/0`)).statusCode, 400)
    })

    await t.test('PATCH renames the flow', async (t) => {
      const { call, url } = await arrangeFlow('four versions')
      tick()
      const response = await call('PATCH', url, { name: 'Welcome' })
      t.equal(response.statusCode, 200)
      t.same(Object.keys(response.json()).sort(), DETAIL_KEYS)
      t.match(response.json(), { name: 'Welcome', updatedAt: clock.toISOString(), publishedVersion: 4 })
      t.same((await call('GET', '/v1/flows')).json().content.map((f: { name: string }) => f.name), ['Welcome'])
      t.same((await call('PATCH', url, {})).json(), response.json(), 'without a name it answers the flow as it is')
      const empty = await call('PATCH', url, { name: '' })
      t.equal(empty.statusCode, 400)
      t.match(empty.json().message, /body\/name must NOT have fewer than 1 characters/)
    })

    await t.test('flows of other workspaces and organizations are not found', async (t) => {
      const { call, url, salesKey, stranger } = await arrangeFlow()
      for (const key of [salesKey.apiKey, stranger.apiKey]) {
        const requests: [Parameters<typeof call>[0], string, unknown][] = [
          ['PUT', `${url}/definition`, greeter('mine')],
          ['POST', `${url}/publish`, undefined],
          ['PATCH', url, { name: 'Mine' }],
          ['GET', `${url}/versions`, undefined],
          ['GET', `${url}/versions/1`, undefined],
        ]
        for (const [method, path, payload] of requests) {
          const response = await call(method, path, payload, key)
          t.equal(response.statusCode, 404, `${method} ${path}`)
        }
      }
      t.same((await call('PUT', `/v1/flows/${unknownId}/definition`, greeter('x'))).json(), { statusCode: 404, message: `flow ${unknownId} not found`, error: 'Not Found' })
      t.equal((await call('POST', `/v1/flows/${unknownId}/publish`)).statusCode, 404)
      t.equal((await call('GET', url)).json().name, 'Greeter', 'nothing changed')
    })

    await t.test('creating a flow with an invalid definition is 400 with its problems', async (t) => {
      const { call } = await arrangeFlow()
      const response = await call('POST', '/v1/flows', { name: 'Broken', definition: broken })
      t.equal(response.statusCode, 400)
      t.same(response.json(), { statusCode: 400, message: brokenMessage, error: 'Bad Request', problems: brokenProblems })
    })

    await t.test('POST /v1/flows/validate checks a definition without saving it', async (t) => {
      const { call } = await arrangeFlow()
      const valid = await call('POST', '/v1/flows/validate', { definition: greeter('Hi') })
      t.equal(valid.statusCode, 200)
      t.same(valid.json(), { valid: true, problems: [] })
      t.same((await call('POST', '/v1/flows/validate', { definition: broken })).json(), { valid: false, problems: brokenProblems })
      t.same((await call('POST', '/v1/flows/validate', { definition: 'x' })).json(), { valid: false, problems: [{ path: '', message: 'the definition must be a JSON object' }] })
      const noDefinition = await call('POST', '/v1/flows/validate', {})
      t.equal(noDefinition.statusCode, 400)
      t.match(noDefinition.json().message, /body must have required property 'definition'/)
    })

    await t.test("definitions are checked against the workspace's sectors, pipelines and variables", async (t) => {
      const { admin, call, url, salesKey } = await arrangeFlow()
      const { sectorId } = await createSector({ ...ctx, db: storage.db }, admin, { name: 'Support' })
      const pipeline = await createPipeline({ ...ctx, db: storage.db }, admin, { name: 'Sales', stages: [{ name: 'New' }] })
      const stageId = pipeline.stages[0]!.id
      const definition = {
        schemaVersion: 1,
        nodes: [
          { id: 'start', type: 'start', position: at, data: {} },
          { id: 'hi', type: 'message', position: at, data: { messages: [{ type: 'text', text: { body: 'Hi {{customer}}' } }] } },
          { id: 'lead', type: 'kanbanMove', position: at, data: { pipelineId: pipeline.id, stageId } },
          { id: 'human', type: 'transfer', position: at, data: { targetType: 'sector', targetId: sectorId } },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'hi' },
          { id: 'e2', source: 'hi', target: 'lead' },
          { id: 'e3', source: 'lead', target: 'human' },
        ],
      }
      const validate = async (key = admin.apiKey) => (await call('POST', '/v1/flows/validate', { definition }, key)).json()
      t.same(await validate(), { valid: false, problems: [{ path: 'nodes[1].data.messages[0].text.body', message: 'unknown variable "customer"' }] })
      t.equal((await call('POST', '/v1/variables', { name: 'customer', type: 'string' })).statusCode, 201)
      t.same(await validate(), { valid: true, problems: [] }, 'a variable defined a moment ago counts')
      t.same((await validate(salesKey.apiKey)).problems.map((p: { path: string }) => p.path), [
        'nodes[1].data.messages[0].text.body',
        'nodes[2].data.pipelineId',
        'nodes[3].data.targetId',
      ], "another workspace's sectors, pipelines and variables do not count")

      t.equal((await call('PUT', `${url}/definition`, definition)).statusCode, 200)
      await deleteSector({ ...ctx, db: storage.db }, admin, sectorId)
      const publish = await call('POST', `${url}/publish`)
      t.equal(publish.statusCode, 400, 'publish validates the draft again')
      t.same(publish.json().problems, [{ path: 'nodes[3].data.targetId', message: `no sector "${sectorId}" in this workspace` }])
      t.equal((await call('GET', `${url}/versions`)).json().totalElements, 1, 'no version was added')
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      const { flowId } = await arrangeFlow('four versions')
      const flows = () => storage.db.selectFrom('flows').selectAll().orderBy('id').execute()
      const versions = () => storage.db.selectFrom('flow_versions').selectAll().orderBy('flow_id').orderBy('version').execute()
      const before = [await flows(), await versions()] as const
      t.equal(before[1].filter((row) => row.flow_id === flowId).length, 4)
      await rebuildProjection(storage, store, flowsProjection)
      t.same([await flows(), await versions()], before)
    })
  })
}
