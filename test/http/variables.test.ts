import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { bootstrap, createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { checkSessionVariables, variablesProjection } from '../../src/projections/variables.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const unknownId = '0190a0b0-0000-7000-8000-00000000dead'
const VARIABLE_KEYS = ['createdAt', 'defaultValue', 'description', 'id', 'name', 'type', 'updatedAt']
const PAGE_KEYS = ['content', 'first', 'last', 'number', 'size', 'totalElements', 'totalPages']

for (const backend of apiBackends) {
  t.test(`workspace variables on ${backend.name}`, async (t) => {
    let clock = new Date('2026-04-01T10:00:00.000Z')
    const { app, ctx, storage, store } = await openTestApp(t, backend, { now: () => clock })
    const as = (key: string) => ({ 'x-api-key': key })
    const names = (page: { content: { name: string }[] }) => page.content.map((v) => v.name)

    /** An organization of its own, the clock at 2026-04-01T10:00Z, with a second workspace Sales and its key. */
    const arrange = async (t: Test) => {
      clock = new Date('2026-04-01T10:00:00.000Z')
      const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
      const sales = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sales' })
      const salesKey = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: sales.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      const define = (payload: object, key = admin.apiKey) => app.inject({ method: 'POST', url: '/v1/variables', headers: as(key), payload })
      const change = (id: string, payload: object, key = admin.apiKey) => app.inject({ method: 'PATCH', url: `/v1/variables/${id}`, headers: as(key), payload })
      const remove = (id: string, key = admin.apiKey) => app.inject({ method: 'DELETE', url: `/v1/variables/${id}`, headers: as(key) })
      const list = async (query = '', key = admin.apiKey) => {
        const response = await app.inject({ method: 'GET', url: `/v1/variables${query}`, headers: as(key) })
        t.equal(response.statusCode, 200, `GET /v1/variables${query}`)
        return response.json()
      }
      /** Defines a variable with a default of each type, one second apart. */
      const defineDefaults = async () => {
        for (const [name, type, defaultValue] of withDefaults) {
          clock = new Date(clock.getTime() + 1000)
          t.equal((await define({ name, type, defaultValue, description: `the ${name}` })).statusCode, 201, name)
        }
      }
      return { admin, sales, salesKey, define, change, remove, list, defineDefaults }
    }
    const withDefaults: [string, string, unknown][] = [
      ['age', 'number', 18.5],
      ['vip', 'boolean', false],
      ['address', 'object', { city: 'Recife', lines: ['a', 'b'] }],
      ['greeting', 'string', ''],
    ]
    /** As arrange, with the string variable `customer` defined at 10:00, then a default of each type. */
    const arrangeVariables = async (t: Test) => {
      const arranged = await arrange(t)
      const customer = await arranged.define({ name: 'customer', type: 'string' })
      t.equal(customer.statusCode, 201, 'customer is defined')
      await arranged.defineDefaults()
      return { ...arranged, customerId: customer.json().id as string }
    }

    await t.test('define answers 201 with the variable; description and default are null when not given', async (t) => {
      const { define } = await arrange(t)
      const response = await define({ name: 'customer', type: 'string' })
      t.equal(response.statusCode, 201)
      const variable = response.json()
      t.same(Object.keys(variable).sort(), VARIABLE_KEYS)
      t.match(variable.id, uuid)
      t.equal(response.headers.location, `/v1/variables/${variable.id}`)
      t.same(variable, { id: variable.id, name: 'customer', type: 'string', description: null, defaultValue: null, createdAt: '2026-04-01T10:00:00.000Z', updatedAt: '2026-04-01T10:00:00.000Z' })
    })

    await t.test('a default of each type', async (t) => {
      const { define } = await arrange(t)
      for (const [name, type, defaultValue] of withDefaults) {
        clock = new Date(clock.getTime() + 1000)
        const response = await define({ name, type, defaultValue, description: `the ${name}` })
        t.equal(response.statusCode, 201, name)
        t.match(response.json(), { name, type, defaultValue, description: `the ${name}` }, name)
      }
    })

    await t.test('the list is a page of the workspace’s variables, oldest first', async (t) => {
      const { admin, salesKey, list } = await arrangeVariables(t)
      const page = await list()
      t.same(Object.keys(page).sort(), PAGE_KEYS)
      t.match(page, { totalElements: 5, totalPages: 1, number: 0, size: 10, first: true, last: true })
      t.same(names(page), ['customer', 'age', 'vip', 'address', 'greeting'])
      t.same(Object.keys(page.content[0]).sort(), VARIABLE_KEYS)
      t.same(page.content[3].defaultValue, { city: 'Recife', lines: ['a', 'b'] })
      t.same(page.content[2].defaultValue, false)
      const second = await list('?size=2&page=1')
      t.same(names(second), ['vip', 'address'])
      t.match(second, { totalElements: 5, totalPages: 3, number: 1, size: 2, first: false, last: false })
      t.same(names(await list('', salesKey.apiKey)), [], 'another workspace has its own variables')
      for (const query of ['?size=0', '?size=101', '?page=-1']) {
        const response = await app.inject({ method: 'GET', url: `/v1/variables${query}`, headers: as(admin.apiKey) })
        t.equal(response.statusCode, 400, query)
      }
    })

    await t.test('names are unique per workspace', async (t) => {
      const { salesKey, define } = await arrangeVariables(t)
      const duplicate = await define({ name: 'customer', type: 'number' })
      t.equal(duplicate.statusCode, 409)
      t.same(duplicate.json(), { statusCode: 409, message: 'variable "customer" already exists in this workspace', error: 'Conflict' })
      t.equal((await define({ name: 'Customer', type: 'string' })).statusCode, 201, 'names are case-sensitive, like the engine')
      t.equal((await define({ name: 'customer', type: 'string' }, salesKey.apiKey)).statusCode, 201, 'another workspace may use the name')
    })

    await t.test('concurrent defines of one name: exactly one wins', async (t) => {
      const { define, list } = await arrange(t)
      const responses = await Promise.all(Array.from({ length: 4 }, () => define({ name: 'raced', type: 'string' })))
      t.same(responses.map((r) => r.statusCode).sort(), [201, 409, 409, 409])
      t.equal(names(await list('?size=100')).filter((name) => name === 'raced').length, 1)
    })

    await t.test('invalid definitions are 400 saying why', async (t) => {
      const { define } = await arrange(t)
      const cases: [object, RegExp | string][] = [
        [{ name: '1st', type: 'string' }, /body\/name must match pattern/],
        [{ name: 'has-dash', type: 'string' }, /body\/name must match pattern/],
        [{ name: 'x'.repeat(101), type: 'string' }, /body\/name must NOT have more than 100 characters/],
        [{ name: 'ok', type: 'date' }, /body\/type must be equal to one of the allowed values: string, number, boolean, object/],
        [{ name: 'ok' }, /body must have required property 'type'/],
        [{ name: 'sessionId', type: 'string' }, '"sessionId" is a system variable; choose another name'],
        [{ name: 'lastMessage', type: 'string' }, '"lastMessage" is a system variable; choose another name'],
        [{ name: 'n', type: 'number', defaultValue: '3' }, "defaultValue must be a number, the variable's type"],
        [{ name: 's', type: 'string', defaultValue: 3 }, "defaultValue must be a string, the variable's type"],
        [{ name: 'b', type: 'boolean', defaultValue: 'true' }, "defaultValue must be a boolean, the variable's type"],
        [{ name: 'o', type: 'object', defaultValue: 'x' }, "defaultValue must be an object, the variable's type"],
        [{ name: 'o', type: 'object', defaultValue: [1] }, /body\/defaultValue must be object/],
        [{ name: 'o', type: 'object', defaultValue: null }, /body\/defaultValue/],
      ]
      for (const [payload, message] of cases) {
        const response = await define(payload)
        t.equal(response.statusCode, 400, assertionMessage(payload))
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, assertionMessage(payload))
      }
    })

    await t.test('PATCH changes the description and default; null clears them', async (t) => {
      const { customerId, change, list } = await arrangeVariables(t)
      clock = new Date('2026-04-02T09:00:00.000Z')
      const changed = await change(customerId, { description: 'full name', defaultValue: 'friend' })
      t.equal(changed.statusCode, 200)
      t.same(changed.json(), {
        id: customerId,
        name: 'customer',
        type: 'string',
        description: 'full name',
        defaultValue: 'friend',
        createdAt: '2026-04-01T10:00:00.000Z',
        updatedAt: '2026-04-02T09:00:00.000Z',
      })
      t.same((await list()).content[0], changed.json(), 'the list shows the change at once')
      const kept = await change(customerId, { name: 'customer', type: 'string', description: 'full name' })
      t.equal(kept.statusCode, 200, 'name and type may be sent back unchanged')
      t.same(kept.json(), changed.json())
      clock = new Date('2026-04-02T10:00:00.000Z')
      const cleared = await change(customerId, { description: null, defaultValue: null })
      t.match(cleared.json(), { description: null, defaultValue: null, updatedAt: '2026-04-02T10:00:00.000Z' })
    })

    await t.test('PATCH with what the variable already holds changes nothing, whatever the key order', async (t) => {
      const { define, change, remove } = await arrange(t)
      const defined = (await define({ name: 'prefs', type: 'object', defaultValue: { a: 1, zone: 'UTC' } })).json()
      clock = new Date('2026-04-02T11:00:00.000Z')
      const same = await change(defined.id, { defaultValue: { zone: 'UTC', a: 1 }, description: null })
      t.equal(same.statusCode, 200)
      t.equal(same.json().updatedAt, defined.updatedAt)
      t.equal((await remove(defined.id)).statusCode, 204)
    })

    await t.test('PATCH never renames nor retypes, and checks the default against the type', async (t) => {
      const { customerId, change, list } = await arrangeVariables(t)
      const renamed = await change(customerId, { name: 'client' })
      t.equal(renamed.statusCode, 400)
      t.equal(renamed.json().message, 'variable "customer" cannot be renamed: flows refer to it by name; define a new variable instead')
      const retyped = await change(customerId, { type: 'number' })
      t.equal(retyped.statusCode, 400)
      t.equal(retyped.json().message, 'the type of variable "customer" cannot change; define a new variable instead')
      const wrongDefault = await change(customerId, { defaultValue: 7 })
      t.equal(wrongDefault.statusCode, 400)
      t.equal(wrongDefault.json().message, "defaultValue must be a string, the variable's type")
      t.equal((await list()).content[0].name, 'customer')
    })

    await t.test('variables of other workspaces and organizations are not found', async (t) => {
      const { salesKey, customerId, change, remove, list } = await arrangeVariables(t)
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const ws = await createWorkspace(ctx, { organizationId, name: 'G' })
      const stranger = await issueApiKey(ctx, { organizationId, workspaceId: ws.workspaceId, name: 'g', role: 'organization-admin', callbackUrl: null })
      for (const key of [salesKey.apiKey, stranger.apiKey]) {
        const patched = await change(customerId, { description: 'mine' }, key)
        t.equal(patched.statusCode, 404)
        t.same(patched.json(), { statusCode: 404, message: `variable ${customerId} not found`, error: 'Not Found' })
        t.equal((await remove(customerId, key)).statusCode, 404)
      }
      t.same(names(await list('', stranger.apiKey)), [])
      t.equal((await change(unknownId, { description: 'x' })).statusCode, 404)
      t.equal((await remove('not-a-uuid')).statusCode, 400)
    })

    await t.test('DELETE answers 204; the variable is gone and its name free again', async (t) => {
      const { customerId, define, change, remove, list } = await arrangeVariables(t)
      const response = await remove(customerId)
      t.equal(response.statusCode, 204)
      t.equal(response.body, '')
      t.notOk(names(await list('?size=100')).includes('customer'))
      t.equal((await remove(customerId)).statusCode, 404)
      t.equal((await change(customerId, { description: 'x' })).statusCode, 404)
      const again = await define({ name: 'customer', type: 'number' })
      t.equal(again.statusCode, 201)
      t.not(again.json().id, customerId)
    })

    await t.test('session variables: unknown names and wrong types are problems naming each key; defaults fill the rest', async (t) => {
      const { admin, sales, salesKey, define, defineDefaults } = await arrange(t)
      t.equal((await define({ name: 'customer', type: 'number' })).statusCode, 201)
      t.equal((await define({ name: 'raced', type: 'string' })).statusCode, 201)
      await defineDefaults()
      t.equal((await define({ name: 'customer', type: 'string' }, salesKey.apiKey)).statusCode, 201)
      const checked = await checkSessionVariables(storage.db, admin.workspaceId, { age: 30, vip: 'yes', nickname: 'Bia', sessionId: 'x', customer: 5 })
      t.same(checked.problems.sort(), [
        'variables.nickname: no variable "nickname" in this workspace',
        'variables.sessionId: a system variable; the engine sets it',
        'variables.vip: must be a boolean',
      ])
      t.same(checked.values, { age: 30, customer: 5, address: { city: 'Recife', lines: ['a', 'b'] }, greeting: '' })
      const defaults = await checkSessionVariables(storage.db, admin.workspaceId, {})
      t.same(defaults, { values: { age: 18.5, vip: false, address: { city: 'Recife', lines: ['a', 'b'] }, greeting: '' }, problems: [] })
      const elsewhere = await checkSessionVariables(storage.db, sales.workspaceId, { age: 30 })
      t.same(elsewhere.problems, ['variables.age: no variable "age" in this workspace'], "another workspace's variables do not count")
    })

    await t.test('an object default may have any keys, line breaks included', async (t) => {
      const { salesKey, define, change, list } = await arrange(t)
      // TypeBox's string-keyed records name their keys by /^(.*)$/, which no key with a line break
      // matches: the event's schema check once dropped such a key and answered 500.
      const defaultValue = { 'two\nlines': 1, 'carriage\rreturn': { 'line\u2028separator': true }, plain: 'x' }
      const response = await define({ name: 'oddKeys', type: 'object', defaultValue }, salesKey.apiKey)
      t.equal(response.statusCode, 201, assertionMessage(response.body))
      t.same(response.json().defaultValue, defaultValue)
      const changed = await change(response.json().id, { defaultValue: { ...defaultValue, 'para\u2029graph': 2 } }, salesKey.apiKey)
      t.equal(changed.statusCode, 200, assertionMessage(changed.body))
      t.same((await list('', salesKey.apiKey)).content.find((v: { name: string }) => v.name === 'oddKeys').defaultValue, { ...defaultValue, 'para\u2029graph': 2 })
    })

    await t.test('rebuilding the read model gives the same rows', async (t) => {
      const { salesKey, customerId, define, change, remove } = await arrangeVariables(t)
      t.equal((await change(customerId, { description: 'full name', defaultValue: 'friend' })).statusCode, 200)
      for (const name of ['Customer', 'raced']) t.equal((await define({ name, type: 'string' })).statusCode, 201, name)
      const prefs = (await define({ name: 'prefs', type: 'object', defaultValue: { a: 1 } })).json()
      t.equal((await remove(prefs.id)).statusCode, 204)
      t.equal((await define({ name: 'customer', type: 'string' }, salesKey.apiKey)).statusCode, 201)
      const rows = () => storage.db.selectFrom('variables').selectAll().orderBy('id').execute()
      const before = await rows()
      t.ok(before.length >= 8)
      await rebuildProjection(storage, store, variablesProjection)
      t.same(await rows(), before)
    })
  })
}
