import type { InjectOptions } from 'fastify'
import t, { type Test } from 'tap'
import { bootstrap, createOrganization, createWorkspace, issueApiKey } from '../../src/commands/tenancy.js'
import { cardsProjection } from '../../src/projections/cards.js'
import { pipelinesProjection } from '../../src/projections/pipelines.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const unknownId = '0190a0b0-0000-7000-8000-00000000dead'
const PIPELINE_KEYS = ['columnAggregation', 'createdAt', 'defaultGroupBy', 'fields', 'id', 'name', 'stages', 'updatedAt', 'workspaceId', 'workspaceName']
const FIELD_KEYS = ['currency', 'id', 'isFeatured', 'name', 'options', 'order', 'required', 'type']
const STAGE_KEYS = ['color', 'id', 'name', 'order', 'pipelineId']
const CARD_KEYS = ['createdAt', 'id', 'movedAt', 'pipelineId', 'sessionId', 'stageId', 'tags', 'values']
const PAGE_KEYS = ['content', 'first', 'last', 'number', 'size', 'totalElements', 'totalPages']

interface Stage {
  id: string
  pipelineId: string
  name: string
  order: number
  color: string
}
interface Field {
  id: string
  name: string
  type: string
  required: boolean
  isFeatured: boolean
  order: number
  options: string[] | null
  currency: string | null
}
interface Pipeline {
  id: string
  name: string
  workspaceId: string
  workspaceName: string
  stages: Stage[]
  fields: Field[]
  createdAt: string
  updatedAt: string
}
interface Card {
  id: string
  pipelineId: string
  stageId: string
  sessionId: string | null
  tags: string[]
  values: Record<string, unknown>
  createdAt: string
  movedAt: string
}

/** The Deals pipeline: its stages out of order, one field of every type. */
const dealsPayload = {
  name: 'Deals',
  stages: [
    { name: 'Won', order: 2, color: '#00AA00' },
    { name: 'Lead', order: 0, color: '#ff0000' },
    { name: 'Talking' },
  ],
  fields: [
    { name: 'Amount', type: 'currency', currency: 'BRL', required: false, isFeatured: true, order: 1 },
    { name: 'Company', type: 'text', required: true, order: 0 },
    { name: 'Seats', type: 'number', order: 2 },
    { name: 'Plan', type: 'select', options: ['basic', 'pro'], order: 3 },
    { name: 'Email', type: 'email', order: 4 },
    { name: 'Phone', type: 'phone', order: 5 },
    { name: 'Closes', type: 'date', order: 6 },
    { name: 'Hot', type: 'boolean', order: 7 },
  ],
}
/** The first card of Deals: a value in every field but Seats, two tags. */
const firstCardPayload = (f: (name: string) => string, s: (name: string) => string) => ({
  stageId: s('Lead'),
  values: { [f('Company')]: 'Acme Corp', [f('Amount')]: 1500.5, [f('Hot')]: true, [f('Plan')]: 'pro', [f('Closes')]: '2026-04-30', [f('Email')]: 'ana@acme.example', [f('Phone')]: '+55 (11) 91234-5678' },
  tags: ['vip', 'inbound'],
})

const byName = <T extends { name: string }>(items: T[], name: string): T => {
  const found = items.find((item) => item.name === name)
  if (!found) throw new Error(`no item named ${name}`)
  return found
}

for (const backend of apiBackends) {
  t.test(`kanban pipelines and cards on ${backend.name}`, async (t) => {
    // A clock the test moves, so createdAt, updatedAt and movedAt are known exactly.
    let clock = Date.parse('2026-03-01T10:00:00.000Z')
    const at = (ms: number) => new Date(ms).toISOString()
    const tick = (ms = 1000) => (clock += ms)
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now: () => new Date(clock) })

    const call = async (key: string, request: InjectOptions) => {
      const response = await app.inject({ ...request, headers: { ...request.headers, 'x-api-key': key } })
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json(), headers: response.headers }
    }
    const as = (key: string) => ({
      get: (url: string) => call(key, { method: 'GET', url }),
      post: (url: string, payload: unknown) => call(key, { method: 'POST', url, payload: payload as object }),
      patch: (url: string, payload: unknown) => call(key, { method: 'PATCH', url, payload: payload as object }),
      delete: (url: string) => call(key, { method: 'DELETE', url }),
    })
    const expectError = (t: Test, response: { status: number; body: unknown }, status: number, message: RegExp, name: string) => {
      t.equal(response.status, status, `${name}: status`)
      const body = response.body as Record<string, unknown>
      t.same(Object.keys(body ?? {}).sort(), ['error', 'message', 'statusCode'], `${name}: the spec's error shape`)
      t.equal(body?.statusCode, status, `${name}: statusCode`)
      t.match(body?.message, message, `${name}: message`)
    }

    let tenants = 0
    // Each subtest works in an organization of its own, its clock set back to 2026-03-01T10:00Z, so no
    // list, count or sum depends on another subtest.
    const arrangeTenant = async () => {
      clock = Date.parse('2026-03-01T10:00:00.000Z')
      const admin = await bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })
      const api = as(admin.apiKey)
      const createPipeline = async (payload: unknown): Promise<Pipeline> => {
        const response = await api.post('/v1/kanban/pipelines', payload)
        if (response.status !== 201) throw new Error(`pipeline not created: ${response.status}`)
        return response.body as Pipeline
      }
      return { admin, api, createPipeline }
    }
    /** A tenant with the Deals pipeline. */
    const arrangeDeals = async () => {
      const tenant = await arrangeTenant()
      const deals = await tenant.createPipeline(dealsPayload)
      const f = (name: string) => byName(deals.fields, name).id
      const s = (name: string) => byName(deals.stages, name).id
      const cardsUrl = () => `/v1/kanban/pipelines/${deals.id}/cards`
      return { ...tenant, deals, f, s, cardsUrl }
    }
    type Deals = Awaited<ReturnType<typeof arrangeDeals>>
    const arrangeCard = async ({ api, cardsUrl }: Deals, payload: unknown): Promise<Card> => {
      const response = await api.post(cardsUrl(), payload)
      if (response.status !== 201) throw new Error(`card not created: ${response.status}`)
      return response.body as Card
    }
    /** The first card of Deals, a second after the pipeline. */
    const arrangeFirstCard = (deals: Deals) => {
      tick()
      return arrangeCard(deals, firstCardPayload(deals.f, deals.s))
    }
    /** The first card, then changed (Seats 12, Plan cleared, tagged customer), moved to Won, and changed to what it already is. */
    const arrangeMovedCard = async (deals: Deals) => {
      const { api, f, s } = deals
      const first = await arrangeFirstCard(deals)
      const steps = [
        { values: { [f('Seats')]: 12, [f('Plan')]: null }, tags: ['customer'] },
        { stageId: s('Won') },
        { stageId: s('Won'), values: { [f('Seats')]: 12 }, tags: ['customer'] },
      ]
      let card = first
      for (const step of steps) {
        tick()
        const response = await api.patch(`/v1/kanban/cards/${first.id}`, step)
        if (response.status !== 200) throw new Error(`card not changed: ${response.status}`)
        card = response.body as Card
      }
      return card
    }

    await t.test('POST /kanban/pipelines answers 201 with the whole pipeline', async (t) => {
      const { admin, api } = await arrangeTenant()
      const created = await api.post('/v1/kanban/pipelines', dealsPayload)
      t.equal(created.status, 201)
      const deals = created.body as Pipeline
      t.equal(created.headers.location, `/v1/kanban/pipelines/${deals.id}`)
      t.same(Object.keys(deals).sort(), PIPELINE_KEYS, "exactly the spec's pipeline fields")
      t.match(deals, { name: 'Deals', workspaceId: admin.workspaceId, workspaceName: 'Main', defaultGroupBy: null, columnAggregation: null })
      t.match(deals.id, uuid, 'a UUID v7')
      t.equal(deals.createdAt, at(clock))
      t.equal(deals.updatedAt, deals.createdAt)
      t.same(
        deals.stages.map(({ id: _id, ...rest }) => rest),
        [
          { pipelineId: deals.id, name: 'Lead', order: 0, color: '#ff0000' },
          { pipelineId: deals.id, name: 'Won', order: 2, color: '#00AA00' },
          { pipelineId: deals.id, name: 'Talking', order: 2, color: '#9E9E9E' },
        ],
        'stages by order (ties keep the given order); order defaults to the place in the list, color to grey',
      )
      for (const stage of deals.stages) {
        t.same(Object.keys(stage).sort(), STAGE_KEYS)
        t.match(stage.id, uuid)
      }
      t.same(
        deals.fields.map(({ id: _id, ...rest }) => rest),
        [
          { name: 'Company', type: 'text', required: true, isFeatured: false, order: 0, options: null, currency: null },
          { name: 'Amount', type: 'currency', required: false, isFeatured: true, order: 1, options: null, currency: 'BRL' },
          { name: 'Seats', type: 'number', required: false, isFeatured: false, order: 2, options: null, currency: null },
          { name: 'Plan', type: 'select', required: false, isFeatured: false, order: 3, options: ['basic', 'pro'], currency: null },
          { name: 'Email', type: 'email', required: false, isFeatured: false, order: 4, options: null, currency: null },
          { name: 'Phone', type: 'phone', required: false, isFeatured: false, order: 5, options: null, currency: null },
          { name: 'Closes', type: 'date', required: false, isFeatured: false, order: 6, options: null, currency: null },
          { name: 'Hot', type: 'boolean', required: false, isFeatured: false, order: 7, options: null, currency: null },
        ],
      )
      for (const field of deals.fields) t.same(Object.keys(field).sort(), FIELD_KEYS)
    })

    await t.test('GET /kanban/pipelines lists it at once, 20 a page by default, exactly as created', async (t) => {
      const { api, deals } = await arrangeDeals()
      const list = await api.get('/v1/kanban/pipelines')
      t.equal(list.status, 200)
      t.same(Object.keys(list.body).sort(), PAGE_KEYS)
      t.same(list.body, { content: [deals], totalElements: 1, totalPages: 1, number: 0, size: 20, first: true, last: true })
      const one = await api.get(`/v1/kanban/pipelines/${deals.id}`)
      t.equal(one.status, 200)
      t.same(one.body, deals)
    })

    await t.test('pipeline validation errors', async (t) => {
      const { api } = await arrangeDeals()
      const stage = { name: 'S' }
      const cases: { name: string; payload: unknown; message: RegExp }[] = [
        { name: 'no name', payload: { stages: [stage] }, message: /body must have required property 'name'/ },
        { name: 'empty name', payload: { name: '', stages: [stage] }, message: /body\/name must NOT have fewer than 1 characters/ },
        { name: 'no stages', payload: { name: 'P', stages: [] }, message: /body\/stages must NOT have fewer than 1 items/ },
        { name: 'bad colour', payload: { name: 'P', stages: [{ name: 'S', color: 'red' }] }, message: /body\/stages\/0\/color must match pattern/ },
        { name: 'short colour', payload: { name: 'P', stages: [{ name: 'S', color: '#fff' }] }, message: /body\/stages\/0\/color must match pattern/ },
        { name: 'fractional order', payload: { name: 'P', stages: [{ name: 'S', order: 1.5 }] }, message: /body\/stages\/0\/order must be integer/ },
        { name: 'negative order', payload: { name: 'P', stages: [{ name: 'S', order: -1 }] }, message: /body\/stages\/0\/order must be >= 0/ },
        {
          name: 'unknown field type',
          payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'colour' }] },
          message: /body\/fields\/0\/type must be equal to one of the allowed values: text, number, currency, date, boolean, select, email, phone/,
        },
        { name: 'select without options', payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'select' }] }, message: /fields\/0\/options: a select field needs its options/ },
        {
          name: 'options on a text field',
          payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'text', options: ['a'] }] },
          message: /fields\/0\/options: only select fields have options/,
        },
        {
          name: 'duplicate options',
          payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'select', options: ['a', 'a'] }] },
          message: /body\/fields\/0\/options must NOT have duplicate items/,
        },
        { name: 'currency without a code', payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'currency' }] }, message: /fields\/0\/currency: a currency field needs a currency code/ },
        {
          name: 'lower-case currency code',
          payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'currency', currency: 'brl' }] },
          message: /body\/fields\/0\/currency must match pattern/,
        },
        {
          name: 'currency on a number field',
          payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'number', currency: 'USD' }] },
          message: /fields\/0\/currency: only currency fields have a currency/,
        },
        { name: 'required not a boolean', payload: { name: 'P', stages: [stage], fields: [{ name: 'F', type: 'text', required: 'yes' }] }, message: /body\/fields\/0\/required must be boolean/ },
      ]
      for (const c of cases) expectError(t, await api.post('/v1/kanban/pipelines', c.payload), 400, c.message, c.name)
      expectError(t, await api.get('/v1/kanban/pipelines?size=101'), 400, /querystring\/size must be <= 100/, 'size above 100')
      expectError(t, await api.get('/v1/kanban/pipelines?size=0'), 400, /querystring\/size must be >= 1/, 'size 0')
      expectError(t, await api.get('/v1/kanban/pipelines?page=-1'), 400, /querystring\/page must be >= 0/, 'negative page')
      expectError(t, await api.get('/v1/kanban/pipelines/not-a-uuid'), 400, /params\/id must match format "uuid"/, 'malformed id')
      expectError(t, await api.patch('/v1/kanban/pipelines/not-a-uuid', { name: 'x' }), 400, /params\/id must match format "uuid"/, 'malformed id in PATCH')
      expectError(t, await api.get(`/v1/kanban/pipelines/${unknownId}`), 404, /pipeline .* not found/, 'unknown id')
      expectError(t, await api.patch(`/v1/kanban/pipelines/${unknownId}`, { name: 'x' }), 404, /pipeline .* not found/, 'PATCH of an unknown id')
      t.equal((await api.get('/v1/kanban/pipelines')).body.totalElements, 1, 'nothing was created by the refused requests')
    })

    await t.test('pipeline page arithmetic', async (t) => {
      const { api, deals, createPipeline } = await arrangeDeals()
      tick()
      const second = await createPipeline({ name: 'Support', stages: [{ name: 'Open' }] })
      tick()
      const third = await createPipeline({ name: 'Hiring', stages: [{ name: 'Applied' }] })
      const page0 = (await api.get('/v1/kanban/pipelines?size=2')).body
      t.match(page0, { totalElements: 3, totalPages: 2, number: 0, size: 2, first: true, last: false })
      t.same(page0.content.map((p: Pipeline) => p.id), [deals.id, second.id], 'oldest first')
      const page1 = (await api.get('/v1/kanban/pipelines?size=2&page=1')).body
      t.match(page1, { totalElements: 3, totalPages: 2, number: 1, size: 2, first: false, last: true })
      t.same(page1.content.map((p: Pipeline) => p.id), [third.id])
      const beyond = (await api.get('/v1/kanban/pipelines?size=2&page=7')).body
      t.same(beyond, { content: [], totalElements: 3, totalPages: 2, number: 7, size: 2, first: false, last: true })
    })

    await t.test('POST …/cards answers 201 with the card; sessionId is null', async (t) => {
      const { api, deals, f, s, cardsUrl } = await arrangeDeals()
      tick()
      const created = await api.post(cardsUrl(), firstCardPayload(f, s))
      t.equal(created.status, 201)
      const first = created.body as Card
      t.equal(created.headers.location, `/v1/kanban/cards/${first.id}`)
      t.same(Object.keys(first).sort(), CARD_KEYS, "exactly the spec's card fields")
      t.match(first.id, uuid)
      t.same(first, {
        id: first.id,
        pipelineId: deals.id,
        stageId: s('Lead'),
        sessionId: null,
        tags: ['vip', 'inbound'],
        values: { [f('Company')]: 'Acme Corp', [f('Amount')]: 1500.5, [f('Hot')]: true, [f('Plan')]: 'pro', [f('Closes')]: '2026-04-30', [f('Email')]: 'ana@acme.example', [f('Phone')]: '+55 (11) 91234-5678' },
        createdAt: at(clock),
        movedAt: at(clock),
      })
      t.same((await api.get(`/v1/kanban/cards/${first.id}`)).body, first, 'GET /kanban/cards/{id} answers the same card')
      const list = await api.get(cardsUrl())
      t.equal(list.status, 200)
      t.same(Object.keys(list.body).sort(), [...PAGE_KEYS, 'aggregations'].sort())
      t.same(list.body, {
        content: [first],
        totalElements: 1,
        totalPages: 1,
        number: 0,
        size: 100,
        first: true,
        last: true,
        aggregations: { [f('Amount')]: 1500.5, [f('Seats')]: 0 },
      }, 'listed at once, 100 a page by default, sums of the currency and number fields only')
    })

    await t.test('card validation errors name the field', async (t) => {
      const arranged = await arrangeDeals()
      const { api, f, s, cardsUrl } = arranged
      await arrangeFirstCard(arranged)
      const lead = s('Lead')
      const company = { [f('Company')]: 'X' }
      const cases: { name: string; payload: unknown; message: RegExp }[] = [
        { name: 'no stageId', payload: { values: company }, message: /body must have required property 'stageId'/ },
        { name: 'malformed stageId', payload: { stageId: 'lead', values: company }, message: /body\/stageId must match format "uuid"/ },
        { name: 'stage of no pipeline', payload: { stageId: unknownId, values: company }, message: new RegExp(`stageId: ${unknownId} is not a stage of pipeline`) },
        { name: 'missing required', payload: { stageId: lead }, message: new RegExp(`values/${f('Company')}: field "Company" is required`) },
        { name: 'required given as null', payload: { stageId: lead, values: { [f('Company')]: null } }, message: /field "Company" is required/ },
        { name: 'unknown field id', payload: { stageId: lead, values: { ...company, [unknownId]: 1 } }, message: new RegExp(`values/${unknownId}: the pipeline has no field with this id`) },
        { name: 'text as a number', payload: { stageId: lead, values: { [f('Company')]: 5 } }, message: /field "Company" \(text\) takes a non-empty string/ },
        { name: 'empty text', payload: { stageId: lead, values: { [f('Company')]: '' } }, message: /field "Company" \(text\) takes a non-empty string/ },
        { name: 'number as a string', payload: { stageId: lead, values: { ...company, [f('Seats')]: '3' } }, message: new RegExp(`values/${f('Seats')}: field "Seats" \\(number\\) takes a number`) },
        { name: 'currency as a string', payload: { stageId: lead, values: { ...company, [f('Amount')]: '10.00' } }, message: /field "Amount" \(currency\) takes a number/ },
        { name: 'boolean as a string', payload: { stageId: lead, values: { ...company, [f('Hot')]: 'yes' } }, message: /field "Hot" \(boolean\) takes true or false/ },
        { name: 'impossible date', payload: { stageId: lead, values: { ...company, [f('Closes')]: '2026-02-30' } }, message: /field "Closes" \(date\) takes a date as YYYY-MM-DD/ },
        { name: 'date-time for a date', payload: { stageId: lead, values: { ...company, [f('Closes')]: '2026-02-03T00:00:00Z' } }, message: /field "Closes" \(date\)/ },
        { name: 'bad email', payload: { stageId: lead, values: { ...company, [f('Email')]: 'ana-at-acme' } }, message: /field "Email" \(email\) takes an email address/ },
        { name: 'bad phone', payload: { stageId: lead, values: { ...company, [f('Phone')]: 'call me' } }, message: /field "Phone" \(phone\) takes a phone number/ },
        { name: 'option not offered', payload: { stageId: lead, values: { ...company, [f('Plan')]: 'gold' } }, message: /field "Plan" \(select\) takes one of: basic, pro/ },
        { name: 'object value', payload: { stageId: lead, values: { [f('Company')]: { a: 1 } } }, message: /field "Company" \(text\)/ },
        { name: 'values not an object', payload: { stageId: lead, values: 'x' }, message: /body\/values must be object/ },
        { name: 'tag with a comma', payload: { stageId: lead, values: company, tags: ['a,b'] }, message: /body\/tags\/0 must match pattern/ },
        { name: 'tag with blanks around', payload: { stageId: lead, values: company, tags: [' a'] }, message: /body\/tags\/0 must match pattern/ },
        { name: 'duplicate tags', payload: { stageId: lead, values: company, tags: ['a', 'a'] }, message: /body\/tags must NOT have duplicate items/ },
      ]
      for (const c of cases) expectError(t, await api.post(cardsUrl(), c.payload), 400, c.message, c.name)
      expectError(t, await api.post(`/v1/kanban/pipelines/${unknownId}/cards`, { stageId: s('Lead') }), 404, /pipeline .* not found/, 'unknown pipeline')
      expectError(t, await api.post('/v1/kanban/pipelines/nope/cards', { stageId: s('Lead') }), 400, /params\/pipelineId must match format "uuid"/, 'malformed pipeline id')
      t.equal((await api.get(cardsUrl())).body.totalElements, 1, 'nothing was created by the refused requests')
    })

    await t.test('card list validation errors', async (t) => {
      const { api, cardsUrl } = await arrangeDeals()
      const cases: { query: string; message: RegExp }[] = [
        { query: 'size=501', message: /querystring\/size must be <= 500/ },
        { query: 'size=0', message: /querystring\/size must be >= 1/ },
        { query: 'page=-1', message: /querystring\/page must be >= 0/ },
        { query: 'size=lots', message: /querystring\/size must be integer/ },
        { query: 'stageId=lead', message: /querystring\/stageId must match format "uuid"/ },
        { query: 'createdAfter=yesterday', message: /querystring\/createdAfter must match format "date-time"/ },
        { query: 'createdAfter=2026-03-01', message: /querystring\/createdAfter must match format "date-time"/ },
        { query: 'createdAfter=2026-13-01T00:00:00Z', message: /querystring\/createdAfter must match format "date-time"/ },
        { query: 'createdAfter=2026-03-01T10:00:00', message: /querystring\/createdAfter must match format "date-time"/ },
      ]
      for (const c of cases) expectError(t, await api.get(`${cardsUrl()}?${c.query}`), 400, c.message, c.query)
      expectError(t, await api.get(`/v1/kanban/pipelines/${unknownId}/cards`), 404, /pipeline .* not found/, 'unknown pipeline')
      expectError(t, await api.get('/v1/kanban/pipelines/x/cards'), 400, /params\/pipelineId must match format "uuid"/, 'malformed pipeline id')
      t.equal((await api.get(`${cardsUrl()}?createdAfter=2026-03-01T07:00:00-03:00`)).status, 200, 'an offset is accepted')
    })

    await t.test('PATCH /kanban/cards/{id} merges values, replaces tags, moves', async (t) => {
      const arranged = await arrangeDeals()
      const { api, f, s } = arranged
      const first = await arrangeFirstCard(arranged)
      tick()
      const changed = await api.patch(`/v1/kanban/cards/${first.id}`, { values: { [f('Seats')]: 12, [f('Plan')]: null }, tags: ['customer'] })
      t.equal(changed.status, 200)
      const { [f('Plan')]: _plan, ...kept } = first.values
      t.same(changed.body, { ...first, tags: ['customer'], values: { ...kept, [f('Seats')]: 12 } }, 'other values kept, null cleared a value, stage and movedAt unchanged')
      tick()
      const moveAt = at(clock)
      const moved = await api.patch(`/v1/kanban/cards/${first.id}`, { stageId: s('Won') })
      t.equal(moved.status, 200)
      t.same(moved.body, { ...(changed.body as Card), stageId: s('Won'), movedAt: moveAt }, 'a move updates stageId and movedAt only')
      t.same((await api.get(`/v1/kanban/cards/${first.id}`)).body, moved.body, 'the read model holds the change at once')
      tick()
      const unchanged = await api.patch(`/v1/kanban/cards/${first.id}`, { stageId: s('Won'), values: { [f('Seats')]: 12 }, tags: ['customer'] })
      t.same(unchanged.body, moved.body, 'a change to the same values and stage changes nothing')
      expectError(t, await api.patch(`/v1/kanban/cards/${first.id}`, { values: { [f('Company')]: null } }), 400, /field "Company" is required and cannot be cleared/, 'clearing a required field')
      expectError(t, await api.patch(`/v1/kanban/cards/${first.id}`, { values: { [f('Seats')]: 'many' } }), 400, /field "Seats" \(number\) takes a number/, 'wrong type')
      expectError(t, await api.patch(`/v1/kanban/cards/${first.id}`, { stageId: unknownId }), 400, /stageId: .* is not a stage of pipeline/, 'a stage of no pipeline')
      expectError(t, await api.patch(`/v1/kanban/cards/${first.id}`, { tags: 'vip' }), 400, /body\/tags must be array/, 'tags not an array')
      expectError(t, await api.patch('/v1/kanban/cards/nope', {}), 400, /params\/id must match format "uuid"/, 'malformed id')
      expectError(t, await api.patch(`/v1/kanban/cards/${unknownId}`, {}), 404, /card .* not found/, 'unknown card')
      expectError(t, await api.get('/v1/kanban/cards/nope'), 400, /params\/id must match format "uuid"/, 'GET with a malformed id')
      expectError(t, await api.get(`/v1/kanban/cards/${unknownId}`), 404, /card .* not found/, 'GET of an unknown card')
    })

    await t.test('card events carry what webhooks need', async (t) => {
      const arranged = await arrangeDeals()
      const { deals, f, s } = arranged
      const first = await arrangeMovedCard(arranged)
      const events = await store.readStream(`card-${first.id}`)
      t.same(events.map((e) => e.type), ['CardCreated', 'CardUpdated', 'CardStageChanged'], 'the no-op change appended nothing')
      t.match(events[0]!.data, { cardId: first.id, pipelineId: deals.id, stageId: s('Lead'), sessionId: null, tags: ['vip', 'inbound'] })
      t.match(events[1]!.data, { cardId: first.id, pipelineId: deals.id, stageId: s('Lead'), sessionId: null, tags: ['customer'], tagsChanged: true })
      t.same([...(events[1]!.data as { changedFieldIds: string[] }).changedFieldIds].sort(), [f('Seats'), f('Plan')].sort())
      t.same(events[2]!.data, { cardId: first.id, pipelineId: deals.id, stageId: s('Won'), previousStageId: s('Lead'), sessionId: null, tags: ['customer'], movedAt: first.movedAt })
    })

    await t.test('search, tag, stage and createdAfter filters with aggregations on one data set', async (t) => {
      const arranged = await arrangeDeals()
      const { api, f, s, cardsUrl, createPipeline } = arranged
      await arrangeMovedCard(arranged)
      const make = async (stage: string, values: Record<string, unknown>, tags: string[]) => {
        tick()
        const response = await api.post(cardsUrl(), { stageId: s(stage), values: Object.fromEntries(Object.entries(values).map(([k, v]) => [f(k), v])), tags })
        if (response.status !== 201) throw new Error(JSON.stringify(response.body))
        return response.body as Card
      }
      const pipeline = await createPipeline({ name: 'Scratch', stages: [{ name: 'Only' }] })
      const c1 = await make('Lead', { Company: 'Acme Corp East', Amount: 1000, Seats: 5 }, ['vip', 'inbound'])
      const since = c1.createdAt
      const c2 = await make('Lead', { Company: 'Globex', Amount: 250.5, Seats: 2 }, ['inbound', 'vip'])
      const c3 = await make('Won', { Company: 'ACME Labs', Amount: 4000 }, ['vip', 'inbound'])
      const c4 = await make('Lead', { Company: 'Acme Foods', Amount: 70, Seats: 1 }, ['vip'])
      const c5 = await make('Lead', { Company: 'Initech', Email: 'buyer@acme.example' }, ['inbound', 'vip'])
      const c6 = await make('Lead', { Company: 'Umbrella', Amount: 10, Seats: 9 }, ['vip', 'inbound'])
      const c7 = await make('Lead', { Company: 'acme west', Amount: 30.25, Seats: 3 }, ['east', 'inbound', 'vip'])
      const c8 = await make('Won', { Company: '100% Acme_ish' }, [])

      const list = async (query: string) => {
        const response = await api.get(`${cardsUrl()}?${query}`)
        t.equal(response.status, 200, query)
        return response.body as { content: Card[]; totalElements: number; totalPages: number; aggregations: Record<string, number> }
      }
      const all = `stageId=${s('Lead')}&q=ACME&createdAfter=${encodeURIComponent(since)}&tags=${encodeURIComponent('vip, inbound')}`
      const together = await list(all)
      t.same(ids(together), [c5.id, c7.id], 'in Lead, created after c1, value containing "acme" in any case, tagged vip and inbound; oldest first')
      t.same(together.aggregations, { [f('Amount')]: 30.25, [f('Seats')]: 3 }, 'sums over the matching cards; a card without the value adds nothing')
      t.equal(together.totalElements, 2)

      // Each filter does its part: without it, a known card comes back.
      t.same(ids(await list(all.replace(`createdAfter=${encodeURIComponent(since)}`, ''))), [c1.id, c5.id, c7.id], 'createdAfter is exclusive and excludes c1')
      t.same(ids(await list(all.replace(`stageId=${s('Lead')}`, ''))), [c3.id, c5.id, c7.id], 'the stage filter excludes c3 (Won)')
      t.same(ids(await list(all.replace(/tags=[^&]*/, ''))), [c4.id, c5.id, c7.id], 'the tag filter excludes c4 (vip only)')
      t.same(ids(await list(all.replace('q=ACME', ''))), [c2.id, c5.id, c6.id, c7.id], 'the search excludes c2 and c6 (no acme anywhere)')
      t.same(ids(await list('tags=east')), [c7.id], 'one tag')
      t.equal((await list('q=&tags=')).totalElements, 9, 'empty q and tags filter nothing')
      t.same(ids(await list(`stageId=${pipeline.stages[0]!.id}`)), [], 'a stage of another pipeline matches nothing')
      t.same(ids(await list('q=100%25')), [c8.id], '% is matched literally (as a wildcard it would find c1, Amount 1000)')
      t.same(ids(await list('q=e_c')), [], '_ is matched literally (as a wildcard it would find "Acme Corp")')
      t.same(ids(await list('q=me_i')), [c8.id])

      const page1 = await list(`${all}&size=1&page=1`)
      t.same(ids(page1), [c7.id], 'second page of one')
      t.match(page1, { totalElements: 2, totalPages: 2, number: 1, size: 1, first: false, last: true })
      t.same(page1.aggregations, together.aggregations, 'aggregations cover every matching card, not the page')

      const none = await list('q=nothing-like-this')
      t.same(none, { content: [], totalElements: 0, totalPages: 0, number: 0, size: 100, first: true, last: true, aggregations: { [f('Amount')]: 0, [f('Seats')]: 0 } })

      const everything = await list('size=500')
      t.equal(everything.totalElements, 9)
      t.same(everything.aggregations, { [f('Amount')]: 1500.5 + 1000 + 250.5 + 4000 + 70 + 10 + 30.25, [f('Seats')]: 12 + 5 + 2 + 1 + 9 + 3 })
      t.same((await api.get(`/v1/kanban/pipelines/${pipeline.id}/cards`)).body.aggregations, {}, 'a pipeline without numeric fields aggregates nothing')
    })

    await t.test('PATCH /kanban/pipelines/{id} renames and replaces stages and fields', async (t) => {
      const arranged = await arrangeDeals()
      const { api, deals, f, s, cardsUrl } = arranged
      const first = await arrangeFirstCard(arranged)
      tick()
      const talking = byName(deals.stages, 'Talking')
      const empty = await api.patch(`/v1/kanban/pipelines/${deals.id}`, {})
      t.same(empty.body, deals, 'an empty change answers the pipeline unchanged')

      const refused = await api.patch(`/v1/kanban/pipelines/${deals.id}`, { stages: [{ id: s('Won'), name: 'Won' }, { id: talking.id, name: 'Talking' }] })
      expectError(t, refused, 409, new RegExp(`cannot remove stage "Lead" \\(${s('Lead')}\\): it still holds cards`), 'removing a stage that holds cards')
      expectError(
        t,
        await api.patch(`/v1/kanban/pipelines/${deals.id}`, { fields: [{ id: f('Seats'), name: 'Seats', type: 'text' }] }),
        409,
        /field "Seats" is a number field and cannot become text/,
        'changing a field type',
      )
      expectError(t, await api.patch(`/v1/kanban/pipelines/${deals.id}`, { stages: [{ id: unknownId, name: 'X' }] }), 400, new RegExp(`stages/0/id: ${unknownId} is not one of this pipeline's stages`), 'unknown stage id')
      expectError(
        t,
        await api.patch(`/v1/kanban/pipelines/${deals.id}`, { stages: [{ id: s('Lead'), name: 'A' }, { id: s('Lead'), name: 'B' }] }),
        400,
        /stages\/1\/id: .* is listed twice/,
        'a stage listed twice',
      )
      expectError(t, await api.patch(`/v1/kanban/pipelines/${deals.id}`, { stages: [{ name: 'X', color: 'blue' }] }), 400, /body\/stages\/0\/color must match pattern/, 'bad colour')
      expectError(t, await api.patch(`/v1/kanban/pipelines/${deals.id}`, { stages: [{ id: 'x', name: 'X' }] }), 400, /body\/stages\/0\/id must match format "uuid"/, 'malformed stage id')
      t.same((await api.get(`/v1/kanban/pipelines/${deals.id}`)).body, deals, 'refused changes change nothing')

      const changedAt = at(clock)
      const keptFields = deals.fields.filter((field) => field.name !== 'Phone').map((field) => (field.name === 'Plan' ? { ...field, options: ['basic', 'pro', 'enterprise'] } : field))
      const response = await api.patch(`/v1/kanban/pipelines/${deals.id}`, {
        name: 'Sales deals',
        stages: [
          { id: s('Lead'), name: 'Lead', order: 0, color: '#123456' },
          { id: s('Won'), name: 'Closed won', order: 5, color: '#00AA00' },
          { name: 'Lost', order: 6, color: '#AA0000' },
        ],
        fields: [...keptFields, { name: 'Source', type: 'text', order: 8 }],
      })
      t.equal(response.status, 200)
      const updated = response.body as Pipeline
      t.same(Object.keys(updated).sort(), PIPELINE_KEYS)
      t.match(updated, { id: deals.id, name: 'Sales deals', createdAt: deals.createdAt, updatedAt: changedAt })
      t.same(
        updated.stages.map((stage) => [stage.id === s('Lead') || stage.id === s('Won') ? stage.id : 'new', stage.name, stage.order, stage.color]),
        [
          [s('Lead'), 'Lead', 0, '#123456'],
          [s('Won'), 'Closed won', 5, '#00AA00'],
          ['new', 'Lost', 6, '#AA0000'],
        ],
        'kept stages keep their ids; the empty "Talking" stage is gone',
      )
      t.match(byName(updated.stages, 'Lost').id, uuid)
      t.same(updated.fields.map((field) => field.name), ['Company', 'Amount', 'Seats', 'Plan', 'Email', 'Closes', 'Hot', 'Source'])
      t.same(byName(updated.fields, 'Plan').options, ['basic', 'pro', 'enterprise'])
      t.same((await api.get(`/v1/kanban/pipelines/${deals.id}`)).body, updated, 'read your writes')
      t.same((await api.get('/v1/kanban/pipelines')).body.content[0], updated)

      const card = (await api.get(`/v1/kanban/cards/${first.id}`)).body as Card
      t.notOk(f('Phone') in card.values, "a removed field's value leaves the cards")
      t.equal(card.values[f('Company')], 'Acme Corp')
      t.same(ids((await api.get(`${cardsUrl()}?q=91234`)).body), [], 'and search no longer finds it')
    })

    await t.test('DELETE /kanban/cards/{id} answers 204 and the card is gone', async (t) => {
      const arranged = await arrangeDeals()
      const { api, deals, s, cardsUrl } = arranged
      const first = await arrangeMovedCard(arranged)
      tick()
      const response = await api.delete(`/v1/kanban/cards/${first.id}`)
      t.equal(response.status, 204)
      t.equal(response.body, undefined, 'no body')
      expectError(t, await api.get(`/v1/kanban/cards/${first.id}`), 404, /card .* not found/, 'GET after delete')
      expectError(t, await api.patch(`/v1/kanban/cards/${first.id}`, { tags: [] }), 404, /card .* not found/, 'PATCH after delete')
      expectError(t, await api.delete(`/v1/kanban/cards/${first.id}`), 404, /card .* not found/, 'a second delete')
      expectError(t, await api.delete('/v1/kanban/cards/nope'), 400, /params\/id must match format "uuid"/, 'malformed id')
      const list = (await api.get(`${cardsUrl()}?size=500`)).body as { content: Card[] }
      t.notOk(list.content.some((c) => c.id === first.id), 'not listed')
      const events = await store.readStream(`card-${first.id}`)
      t.same(events.at(-1)?.type, 'CardDeleted')
      t.match(events.at(-1)?.data, { cardId: first.id, pipelineId: deals.id, stageId: s('Won'), sessionId: null, tags: ['customer'] })
    })

    await t.test('other workspaces and organizations see nothing of these pipelines and cards', async (t) => {
      const arranged = await arrangeDeals()
      const { admin, api, deals, f, s, cardsUrl } = arranged
      await arrangeFirstCard(arranged)
      const [card] = ((await api.get(cardsUrl())).body as { content: Card[] }).content
      if (!card) throw new Error('expected a card')
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId, name: 'Globex main' })
      const otherOrg = await issueApiKey(ctx, { organizationId, workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      const sibling = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sibling' })
      const otherWorkspace = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sibling.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      for (const [who, key] of [['another organization', otherOrg.apiKey], ['another workspace of the same organization', otherWorkspace.apiKey]] as const) {
        const them = as(key)
        t.same((await them.get('/v1/kanban/pipelines')).body.content, [], `${who}: no pipelines listed`)
        expectError(t, await them.get(`/v1/kanban/pipelines/${deals.id}`), 404, /not found/, `${who}: GET pipeline`)
        expectError(t, await them.patch(`/v1/kanban/pipelines/${deals.id}`, { name: 'Mine' }), 404, /not found/, `${who}: PATCH pipeline`)
        expectError(t, await them.get(cardsUrl()), 404, /not found/, `${who}: list cards`)
        expectError(t, await them.post(cardsUrl(), { stageId: s('Lead'), values: { [f('Company')]: 'Mine' } }), 404, /not found/, `${who}: create card`)
        expectError(t, await them.get(`/v1/kanban/cards/${card.id}`), 404, /not found/, `${who}: GET card`)
        expectError(t, await them.patch(`/v1/kanban/cards/${card.id}`, { tags: ['mine'] }), 404, /not found/, `${who}: PATCH card`)
        expectError(t, await them.delete(`/v1/kanban/cards/${card.id}`), 404, /not found/, `${who}: DELETE card`)
      }
      t.same((await api.get(`/v1/kanban/cards/${card.id}`)).body, card, 'the card is untouched')
      t.equal((await api.get(`/v1/kanban/pipelines/${deals.id}`)).body.name, 'Deals', 'the pipeline is untouched')
      const created = await as(otherOrg.apiKey).post('/v1/kanban/pipelines', { name: 'Globex deals', stages: [{ name: 'New' }] })
      t.equal(created.status, 201)
      t.match(created.body, { workspaceId, workspaceName: 'Globex main' })
      t.same(((await as(otherOrg.apiKey).get('/v1/kanban/pipelines')).body.content as Pipeline[]).map((p) => p.name), ['Globex deals'], 'each lists its own')
    })

    await t.test('rebuilding the kanban read models gives identical rows', async (t) => {
      const arranged = await arrangeDeals()
      const { admin, api, deals, f, s, createPipeline } = arranged
      const moved = await arrangeMovedCard(arranged)
      for (const name of ['Support', 'Hiring', 'Scratch']) await createPipeline({ name, stages: [{ name: 'Only' }] })
      for (const company of ['Acme Corp East', 'Globex', 'ACME Labs', 'Acme Foods', 'Initech', 'Umbrella', 'acme west', '100% Acme_ish']) {
        tick()
        await arrangeCard(arranged, { stageId: s('Lead'), values: { [f('Company')]: company }, tags: ['vip'] })
      }
      tick()
      t.equal((await api.delete(`/v1/kanban/cards/${moved.id}`)).status, 204)
      tick()
      t.equal((await api.patch(`/v1/kanban/pipelines/${deals.id}`, { name: 'Sales deals' })).status, 200)
      const snapshot = async () => ({
        pipelines: await storage.db.selectFrom('kanban_pipelines').selectAll().orderBy('id').execute(),
        cards: await storage.db.selectFrom('kanban_cards').selectAll().orderBy('id').execute(),
      })
      const before = await snapshot()
      const ours = <T extends { workspace_id: string }>(rows: T[]) => rows.filter((row) => row.workspace_id === admin.workspaceId)
      t.ok(ours(before.pipelines).length >= 4 && ours(before.cards).length >= 8, 'there is something to rebuild')
      await rebuildProjection(storage, store, pipelinesProjection)
      await rebuildProjection(storage, store, cardsProjection)
      t.same(await snapshot(), before)
    })
  })
}

const ids = (body: { content: { id: string }[] }) => body.content.map((c) => c.id)
