import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { verifyClientSecret } from '../../src/commands/oauth-clients.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { oauthClientStream } from '../../src/domain/oauth-client.js'
import { findOAuthClientCredentials, oauthClientsProjection } from '../../src/projections/oauth-clients.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

for (const backend of apiBackends) {
  t.test(`OAuth clients on ${backend.name}`, async (t) => {
    const { app, ctx, storage, store } = await openTestApp(t, backend)
    const as = (key: string) => ({ 'x-api-key': key })
    let tenants = 0
    // Each subtest works in an organization of its own, so no list or count depends on another subtest.
    const arrangeTenant = async () => {
      const admin = await bootstrap(ctx, { organization: `Tenant ${++tenants}`, workspace: 'Main', callbackUrl: null })
      const create = (payload: unknown, key = admin.apiKey) => app.inject({ method: 'POST', url: '/v1/clients', headers: as(key), payload: payload as object })
      const get = (query = '', key = admin.apiKey) => app.inject({ method: 'GET', url: `/v1/clients${query}`, headers: as(key) })
      const list = async (query = '', key = admin.apiKey) => (await get(query, key)).json()
      const remove = (clientId: string, key = admin.apiKey) => app.inject({ method: 'DELETE', url: `/v1/clients/${clientId}`, headers: as(key) })
      const arrangeClient = async (name: string): Promise<{ clientId: string; clientSecret: string; name: string }> => {
        const response = await create({ name })
        if (response.statusCode !== 201) throw new Error(`arranging client ${name} answered ${response.statusCode}`)
        return response.json()
      }
      return { admin, create, get, list, remove, arrangeClient }
    }
    const expectError = (t: Test, response: { statusCode: number; json(): Record<string, unknown> }, status: number, message: RegExp) => {
      t.equal(response.statusCode, status)
      const body = response.json()
      t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], 'the spec error shape')
      t.equal(body.statusCode, status)
      t.match(body.message, message)
    }

    await t.test('an empty list is an empty page', async (t) => {
      const { list } = await arrangeTenant()
      t.same(await list(), { content: [], totalElements: 0, totalPages: 0, number: 0, size: 10, first: true, last: true })
    })

    await t.test('create answers 201 with the id, the secret once, and the name', async (t) => {
      const { create, list } = await arrangeTenant()
      const response = await create({ name: 'Customer portal' })
      t.equal(response.statusCode, 201)
      const portal: { clientId: string; clientSecret: string; name: string } = response.json()
      t.same(Object.keys(portal).sort(), ['clientId', 'clientSecret', 'name'])
      t.match(portal, { clientId: uuidV7, clientSecret: /^whcs_[A-Za-z0-9_-]{43}$/, name: 'Customer portal' })

      const page = await list()
      t.equal(page.totalElements, 1, 'listed as soon as the create call answers')
      t.same(Object.keys(page.content[0]).sort(), ['clientId', 'createdAt', 'name'], 'no secret, no hash, no workspace in the list')
      t.match(page.content[0], { clientId: portal.clientId, name: 'Customer portal', createdAt: iso })
      t.notOk(JSON.stringify(page).includes(portal.clientSecret), 'the secret never appears again')
      t.notOk(JSON.stringify(page).includes('scrypt'), 'nor its hash')
    })

    await t.test('only a slow salted hash of the secret is kept, and it verifies', async (t) => {
      const { admin, create, remove, arrangeClient } = await arrangeTenant()
      const portal = await arrangeClient('Customer portal')
      const row = await storage.db.selectFrom('oauth_clients').selectAll().where('id', '=', portal.clientId).executeTakeFirstOrThrow()
      t.match(row, { organization_id: admin.organizationId, workspace_id: admin.workspaceId, name: 'Customer portal', revoked_at: null })
      t.match(row.secret_hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
      const events = await store.readStream(oauthClientStream(portal.clientId))
      t.same(events.map((e) => e.type), ['OAuthClientRegistered'])
      t.notOk(JSON.stringify(events.map((e) => [e.data, e.metadata])).includes(portal.clientSecret), 'the secret is not in the event store')
      t.notOk(JSON.stringify(row).includes(portal.clientSecret), 'nor in the read model')

      const credentials = await findOAuthClientCredentials(storage.db, portal.clientId)
      t.same(credentials, { clientId: portal.clientId, organizationId: admin.organizationId, workspaceId: admin.workspaceId, secretHash: row.secret_hash })
      t.equal(await verifyClientSecret(portal.clientSecret, row.secret_hash), true, 'the right secret verifies')
      t.equal(await verifyClientSecret(`${portal.clientSecret}x`, row.secret_hash), false, 'a wrong secret does not')
      t.equal(await verifyClientSecret('', row.secret_hash), false)

      const second = (await create({ name: 'Customer portal' })).json()
      const secondRow = await storage.db.selectFrom('oauth_clients').select('secret_hash').where('id', '=', second.clientId).executeTakeFirstOrThrow()
      t.not(second.clientSecret, portal.clientSecret, 'every client gets its own secret')
      t.not(secondRow.secret_hash.split('$')[4], row.secret_hash.split('$')[4], 'and its own salt')
      t.equal(await verifyClientSecret(portal.clientSecret, secondRow.secret_hash), false, "one client's secret does not open another")
      t.equal((await remove(second.clientId)).statusCode, 204)
    })

    await t.test('malformed or out-of-bounds stored hashes never verify', async (t) => {
      const { arrangeClient } = await arrangeTenant()
      const portal = await arrangeClient('Customer portal')
      const [, , , , salt, hash] = (await findOAuthClientCredentials(storage.db, portal.clientId))!.secretHash.split('$')
      for (const stored of [
        '',
        'plain',
        `bcrypt$32768$8$1$${salt}$${hash}`,
        `scrypt$32768$8$1$${salt}`,
        `scrypt$1000$8$1$${salt}$${hash}`,
        `scrypt$${2 ** 30}$8$1$${salt}$${hash}`,
        `scrypt$32768$0$1$${salt}$${hash}`,
        `scrypt$32768$8$99$${salt}$${hash}`,
        `scrypt$32768$8$1$$${hash}`,
        `scrypt$32768$8$1$${salt}$short`,
      ]) {
        t.equal(await verifyClientSecret(portal.clientSecret, stored), false, stored || '(empty)')
      }
    })

    await t.test('validation', async (t) => {
      const { create, get, list, remove, arrangeClient } = await arrangeTenant()
      await arrangeClient('Customer portal')
      expectError(t, await create({ name: '' }), 400, /body\/name must NOT have fewer than 1 characters/)
      expectError(t, await create({ name: 42 }), 400, /body\/name must be string/)
      expectError(t, await create({}), 400, /body must have required property 'name'/)
      expectError(t, await create({ name: 'x'.repeat(201) }), 400, /body\/name must NOT have more than 200 characters/)
      expectError(t, await get('?size=0'), 400, /querystring\/size must be >= 1/)
      expectError(t, await get('?size=101'), 400, /querystring\/size must be <= 100/)
      expectError(t, await get('?page=-1'), 400, /querystring\/page must be >= 0/)
      expectError(t, await remove('not-a-uuid'), 400, /params\/clientId must match format "uuid"/)
      expectError(t, await app.inject({ method: 'GET', url: '/v1/clients' }), 401, /Missing X-Api-Key/)
      t.equal((await list()).totalElements, 1, 'nothing was created by refused calls')
    })

    await t.test('page arithmetic, oldest first', async (t) => {
      const { create, list, arrangeClient } = await arrangeTenant()
      await arrangeClient('Customer portal')
      for (const name of ['B', 'C', 'D', 'E']) t.equal((await create({ name })).statusCode, 201)
      const first = await list('?size=2')
      t.match(first, { totalElements: 5, totalPages: 3, number: 0, size: 2, first: true, last: false })
      t.same(first.content.map((c: { name: string }) => c.name), ['Customer portal', 'B'])
      const last = await list('?size=2&page=2')
      t.match(last, { totalElements: 5, totalPages: 3, number: 2, size: 2, first: false, last: true })
      t.same(last.content.map((c: { name: string }) => c.name), ['E'])
      t.match(await list('?size=2&page=7'), { content: [], totalElements: 5, number: 7, last: true })
      t.equal((await list('?size=100')).content.length, 5)
    })

    await t.test('delete revokes: 204, gone from the list, a second delete is 404', async (t) => {
      const { create, list, remove, arrangeClient } = await arrangeTenant()
      for (const name of ['Customer portal', 'B', 'C', 'D', 'E']) await arrangeClient(name)
      const doomed = (await create({ name: 'Doomed' })).json()
      const response = await remove(doomed.clientId)
      t.equal(response.statusCode, 204)
      t.equal(response.body, '')
      const page = await list('?size=100')
      t.notOk(page.content.some((c: { clientId: string }) => c.clientId === doomed.clientId))
      t.equal(page.totalElements, 5)
      t.equal(await findOAuthClientCredentials(storage.db, doomed.clientId), undefined, 'its credentials no longer resolve')
      expectError(t, await remove(doomed.clientId), 404, new RegExp(`OAuth client ${doomed.clientId} not found`))
      expectError(t, await remove('0190a0b0-0000-7000-8000-00000000dead'), 404, /not found/)
    })

    await t.test('clients belong to one workspace', async (t) => {
      const { admin, create, list, remove, arrangeClient } = await arrangeTenant()
      const portal = await arrangeClient('Customer portal')
      const { workspaceId } = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId, name: 'sales', role: 'workspace', callbackUrl: null })
      t.same((await list('', salesKey.apiKey)).content, [], "a sibling workspace sees none of Main's clients")
      expectError(t, await remove(portal.clientId, salesKey.apiKey), 404, /not found/)
      const sales = (await create({ name: 'Sales portal' }, salesKey.apiKey)).json()
      const row = await storage.db.selectFrom('oauth_clients').select(['workspace_id', 'organization_id']).where('id', '=', sales.clientId).executeTakeFirstOrThrow()
      t.same(row, { workspace_id: workspaceId, organization_id: admin.organizationId }, "recorded in the key's workspace and organization")
      t.notOk((await list('?size=100')).content.some((c: { clientId: string }) => c.clientId === sales.clientId), "the admin key lists its own workspace's clients only")
      expectError(t, await remove(sales.clientId), 404, /not found/)
      t.equal((await remove(sales.clientId, salesKey.apiKey)).statusCode, 204)
    })

    await t.test('another organization sees none of the first', async (t) => {
      const { create, list, remove, arrangeClient } = await arrangeTenant()
      const portal = await arrangeClient('Customer portal')
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const { workspaceId } = await createWorkspace(ctx, { organizationId, name: 'Globex main' })
      const globex = await issueApiKey(ctx, { organizationId, workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      t.same(await list('', globex.apiKey), { content: [], totalElements: 0, totalPages: 0, number: 0, size: 10, first: true, last: true })
      expectError(t, await remove(portal.clientId, globex.apiKey), 404, /not found/)
      const theirs = (await create({ name: 'Globex portal' }, globex.apiKey)).json()
      t.same((await list('', globex.apiKey)).content.map((c: { clientId: string }) => c.clientId), [theirs.clientId])
      t.notOk((await list('?size=100')).content.some((c: { clientId: string }) => c.clientId === theirs.clientId))
      expectError(t, await remove(theirs.clientId), 404, /not found/)
      t.ok((await list('?size=100')).content.some((c: { clientId: string }) => c.clientId === portal.clientId), 'the first organization still has its client')
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      const { admin, remove, arrangeClient } = await arrangeTenant()
      const arranged = []
      for (const name of ['Customer portal', 'B', 'C', 'D', 'E', 'F', 'G', 'H']) arranged.push(await arrangeClient(name))
      for (const { clientId } of arranged.slice(-2)) t.equal((await remove(clientId)).statusCode, 204)
      const snapshot = () => storage.db.selectFrom('oauth_clients').selectAll().orderBy('id').execute()
      const before = await snapshot()
      const ours = before.filter((row) => row.organization_id === admin.organizationId)
      t.ok(ours.some((row) => row.revoked_at !== null), 'the data set includes revocations')
      t.ok(ours.length >= 8)
      await rebuildProjection(storage, store, oauthClientsProjection)
      t.same(await snapshot(), before)
    })
  })
}
