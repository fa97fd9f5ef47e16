import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { sectorsProjection } from '../../src/projections/sectors.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

for (const backend of apiBackends) {
  t.test(`sectors on ${backend.name}`, async (t) => {
    const { app, ctx, storage, store } = await openTestApp(t, backend)
    const as = (key: string) => ({ 'x-api-key': key })
    let tenants = 0
    // Each subtest works in an organization of its own, so no count or name depends on another subtest.
    const arrangeTenant = async () => {
      tenants += 1
      const tenant = await bootstrap(ctx, { organization: `Tenant ${tenants}`, workspace: 'Main', callbackUrl: null })
      const create = (name: unknown, key = tenant.apiKey) => app.inject({ method: 'POST', url: '/v1/sectors', headers: as(key), payload: { name } })
      const list = async (query = '', key = tenant.apiKey) => (await app.inject({ method: 'GET', url: `/v1/sectors${query}`, headers: as(key) })).json()
      const createSector = async (name: string) => {
        const response = await create(name)
        if (response.statusCode !== 201) throw new Error(`arranging sector ${name} answered ${response.statusCode}`)
        return /^\/v1\/sectors\/([0-9a-f-]{36})$/.exec(String(response.headers.location))?.[1] ?? ''
      }
      return { ...tenant, create, list, createSector }
    }

    await t.test('an empty list has the envelope of an empty page', async (t) => {
      const { list } = await arrangeTenant()
      t.same(await list(), { content: [], totalElements: 0, totalPages: 0, number: 0, size: 10, first: true, last: true })
    })

    await t.test('create answers 201 with no body and a Location; the sector is listed at once', async (t) => {
      const { create, list } = await arrangeTenant()
      const response = await create('Sales')
      t.equal(response.statusCode, 201)
      t.equal(response.body, '')
      const salesId = /^\/v1\/sectors\/([0-9a-f-]{36})$/.exec(String(response.headers.location))?.[1] ?? ''
      t.ok(salesId, 'Location names the sector')
      const page = await list()
      t.equal(page.totalElements, 1)
      t.same(Object.keys(page.content[0]).sort(), ['createdAt', 'id', 'name', 'updatedAt'])
      t.match(page.content[0], { id: salesId, name: 'Sales' })
    })

    await t.test('validation', async (t) => {
      const { apiKey, create } = await arrangeTenant()
      for (const [name, message] of [
        ['', /body\/name must NOT have fewer than 1 characters/],
        [42, /body\/name must be string/],
        [undefined, /body must have required property 'name'/],
      ] as const) {
        const response = await create(name)
        t.equal(response.statusCode, 400)
        t.match(response.json().message, message)
      }
      const badId = await app.inject({ method: 'PATCH', url: '/v1/sectors/not-a-uuid', headers: as(apiKey), payload: { name: 'x' } })
      t.equal(badId.statusCode, 400)
      t.match(badId.json().message, /params\/id must match format "uuid"/)
    })

    await t.test('rename answers the sector; without a name it answers it unchanged', async (t) => {
      const { apiKey, list, createSector } = await arrangeTenant()
      const salesId = await createSector('Sales')
      const renamed = await app.inject({ method: 'PATCH', url: `/v1/sectors/${salesId}`, headers: as(apiKey), payload: { name: 'Inside sales' } })
      t.equal(renamed.statusCode, 200)
      t.same(renamed.json(), { id: salesId, name: 'Inside sales' })
      const unchanged = await app.inject({ method: 'PATCH', url: `/v1/sectors/${salesId}`, headers: as(apiKey), payload: {} })
      t.same(unchanged.json(), { id: salesId, name: 'Inside sales' })
      t.match((await list()).content[0], { id: salesId, name: 'Inside sales' })
    })

    await t.test('page arithmetic over several pages', async (t) => {
      const { apiKey, create, list } = await arrangeTenant()
      for (const name of ['Sales', 'Support', 'Billing', 'Onboarding', 'Retention']) t.equal((await create(name)).statusCode, 201)
      t.match(await list('?size=2'), { totalElements: 5, totalPages: 3, number: 0, size: 2, first: true, last: false })
      const last = await list('?size=2&page=2')
      t.match(last, { number: 2, first: false, last: true })
      t.equal(last.content.length, 1, 'a partial last page')
      t.match(await list('?size=5'), { totalPages: 1, first: true, last: true }, 'an exact single page')
      t.equal((await app.inject({ method: 'GET', url: '/v1/sectors?size=0', headers: as(apiKey) })).statusCode, 400)
    })

    await t.test('another workspace, even of the same organization, cannot see or touch the sectors', async (t) => {
      const { organizationId: ownOrganizationId, list, createSector } = await arrangeTenant()
      const salesId = await createSector('Sales')
      const { workspaceId } = await createWorkspace(ctx, { organizationId: ownOrganizationId, name: 'Second' })
      const sibling = await issueApiKey(ctx, { organizationId: ownOrganizationId, workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const globexWs = await createWorkspace(ctx, { organizationId, name: 'G' })
      const stranger = await issueApiKey(ctx, { organizationId, workspaceId: globexWs.workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      for (const key of [sibling.apiKey, stranger.apiKey]) {
        t.same((await list('', key)).content, [])
        const patch = await app.inject({ method: 'PATCH', url: `/v1/sectors/${salesId}`, headers: as(key), payload: { name: 'Mine' } })
        t.equal(patch.statusCode, 404)
        t.equal(patch.json().error, 'Not Found')
        t.equal((await app.inject({ method: 'DELETE', url: `/v1/sectors/${salesId}`, headers: as(key) })).statusCode, 404)
      }
      t.match((await list()).content[0], { id: salesId, name: 'Sales' }, 'untouched')
    })

    await t.test('names are unique per workspace, compared without case and surrounding spaces', async (t) => {
      const { apiKey, organizationId, create, list, createSector } = await arrangeTenant()
      for (const name of ['Inside sales', 'Support', 'Billing']) await createSector(name)
      const rename = (id: string, name: string, key = apiKey) => app.inject({ method: 'PATCH', url: `/v1/sectors/${id}`, headers: as(key), payload: { name } })
      const idOf = async (name: string) => ((await list('?size=100')).content as { id: string; name: string }[]).find((s) => s.name === name)!.id
      for (const name of ['support', '  SUPPORT ', 'Inside Sales']) {
        const taken = await create(name)
        t.equal(taken.statusCode, 409, name)
        t.same(taken.json(), { statusCode: 409, error: 'Conflict', message: `a sector named "${name.trim()}" already exists in this workspace` })
      }
      const billing = await idOf('Billing')
      const renamed = await rename(billing, ' support')
      t.equal(renamed.statusCode, 409, 'a rename to a taken name')
      t.equal(renamed.json().error, 'Conflict')
      t.equal(await idOf('Billing'), billing, 'the sector keeps its name')
      t.same((await rename(billing, 'BILLING')).json(), { id: billing, name: 'BILLING' }, 'a sector may change the case of its own name')
      t.same((await rename(billing, 'Invoices')).json(), { id: billing, name: 'Invoices' })
      t.equal((await create('billing')).statusCode, 201, 'the name a rename left is free again')

      const { workspaceId } = await createWorkspace(ctx, { organizationId, name: 'Third' })
      const other = await issueApiKey(ctx, { organizationId, workspaceId, name: 't', role: 'workspace', callbackUrl: null })
      t.equal((await create('Support', other.apiKey)).statusCode, 201, 'another workspace may use the name')
    })

    await t.test('two creates at once with one name: one 201, one 409', async (t) => {
      const { create, list } = await arrangeTenant()
      for (const name of ['Escalations', 'Renewals', 'Partners']) {
        const answers = await Promise.all([create(name), create(name.toUpperCase())])
        t.same(answers.map((a) => a.statusCode).sort(), [201, 409], name)
      }
      const names = ((await list('?size=100')).content as { name: string }[]).map((s) => s.name.toLowerCase())
      t.equal(names.filter((n) => n === 'escalations').length, 1)
    })

    await t.test('a reservation left by a create that failed midway', async (t) => {
      const { workspaceId, create } = await arrangeTenant()
      const ghost = '0190a0b0-0000-7000-8000-00000000beef'
      const reserve = (reservedAt: string) =>
        storage.db.insertInto('sector_names').values({ workspace_id: workspaceId, name_key: 'ghosts', sector_id: ghost, reserved_at: reservedAt }).execute()
      await reserve(new Date().toISOString())
      t.equal((await create('Ghosts')).statusCode, 409, 'blocks the name while the create may still be under way')
      await storage.db.deleteFrom('sector_names').where('sector_id', '=', ghost).execute()
      await reserve('2020-01-01T00:00:00.000Z')
      t.equal((await create('Ghosts')).statusCode, 201, 'is taken over once it is old and no sector carries the name')
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      const { apiKey, createSector } = await arrangeTenant()
      const renamedId = await createSector('Sales')
      await createSector('Support')
      await createSector('Billing')
      t.equal((await app.inject({ method: 'PATCH', url: `/v1/sectors/${renamedId}`, headers: as(apiKey), payload: { name: 'Inside sales' } })).statusCode, 200)
      const before = await storage.db.selectFrom('sectors').selectAll().orderBy('id').execute()
      await rebuildProjection(storage, store, sectorsProjection)
      t.same(await storage.db.selectFrom('sectors').selectAll().orderBy('id').execute(), before)
    })

    await t.test('delete answers 204, then the sector is gone', async (t) => {
      const { apiKey, create, list, createSector } = await arrangeTenant()
      const salesId = await createSector('Inside sales')
      const deleted = await app.inject({ method: 'DELETE', url: `/v1/sectors/${salesId}`, headers: as(apiKey) })
      t.equal(deleted.statusCode, 204)
      t.equal(deleted.body, '')
      t.notOk((await list('?size=100')).content.some((s: { id: string }) => s.id === salesId))
      t.equal((await app.inject({ method: 'DELETE', url: `/v1/sectors/${salesId}`, headers: as(apiKey) })).statusCode, 404)
      t.equal((await app.inject({ method: 'PATCH', url: `/v1/sectors/${salesId}`, headers: as(apiKey), payload: { name: 'Back' } })).statusCode, 404)
      t.equal((await create('Inside sales')).statusCode, 201, "a deleted sector's name is free again")
    })
  })
}
