import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { revealSecrets } from '../../src/commands/secrets.js'
import { createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { secretsStream, type SecretEvent } from '../../src/domain/secret.js'
import { masterKey, open, valueContext } from '../../src/secrets/cipher.js'
import { MasterKeyMissingError, SecretKeyring } from '../../src/secrets/keyring.js'
import { openTestApp, testSecretsMasterKeys } from '../helpers/app.js'
import { capturedLogs } from '../helpers/captured-logs.js'
import { reachableBackends } from '../helpers/storage.js'

// Workspace secrets are write-only: the API answers names and dates, the engine reads values with
// revealSecrets, and the value is stored only sealed, under a data key kept outside the event
// store, which a replacement or a deletion shreds. On both stores: what lands in the events table
// and the keys table is the subject.

const SECRET_KEYS = ['createdAt', 'name', 'updatedAt']
const PAGE_KEYS = ['content', 'first', 'last', 'number', 'size', 'totalElements', 'totalPages']
const ERROR_KEYS = ['error', 'message', 'statusCode']

for (const backend of reachableBackends) {
  t.test(`workspace secrets on ${backend.name}`, async (t) => {
    const logs = capturedLogs()
    let clock = new Date('2026-04-01T10:00:00.000Z')
    const { app, ctx, storage, store, secrets: keyring, admin } = await openTestApp(t, backend, { now: () => clock, logger: logs.logger })
    const ws = admin.workspaceId
    const as = (key: string) => ({ 'x-api-key': key })

    /** Every value this file stores, for the checks that none of them shows anywhere. */
    const values: string[] = []
    const aValue = (label: string) => {
      const value = `${label}-${randomBytes(12).toString('hex')}`
      values.push(value)
      return value
    }
    const put = (name: string, value: unknown, key = admin.apiKey) => app.inject({ method: 'PUT', url: `/v1/secrets/${name}`, headers: as(key), payload: { value } })
    const remove = (name: string, key = admin.apiKey) => app.inject({ method: 'DELETE', url: `/v1/secrets/${name}`, headers: as(key) })
    const list = async (query = '', key = admin.apiKey) => {
      const response = await app.inject({ method: 'GET', url: `/v1/secrets${query}`, headers: as(key) })
      t.equal(response.statusCode, 200, `GET /v1/secrets${query}`)
      return response.json() as { content: { name: string }[]; totalElements: number }
    }
    const reveal = (names: string[], workspaceId = ws, secrets = keyring) => revealSecrets({ store, secrets }, workspaceId, names)
    const eventsOf = async (workspaceId = ws) => (await store.readStream(secretsStream(workspaceId))).map((e) => ({ type: e.type, data: e.data }) as SecretEvent)
    const keyRows = (name: string, workspaceId = ws) =>
      storage.db.selectFrom('secret_keys').select(['id', 'set_version']).where('workspace_id', '=', workspaceId).where('name', '=', name).execute()
    /** Whether `event`'s value opens with any data key still stored: never, once shredded. */
    const readable = async (event: SecretEvent, workspaceId = ws) => {
      if (event.type !== 'SecretSet') return false
      const key = (await keyring.unwrap(workspaceId, [event.data.keyId])).get(event.data.keyId)
      return key !== undefined && open(key, event.data, valueContext(workspaceId, event.data.name, event.data.keyId)).length > 0
    }
    /** Another organization's key, and a workspace key of another workspace of the admin's organization. */
    const strangers = async () => {
      const other = await createOrganization(ctx, { name: `Other ${randomBytes(3).toString('hex')}` })
      const otherWorkspace = await createWorkspace(ctx, { organizationId: other.organizationId, name: 'W' })
      const foreign = await issueApiKey(ctx, { organizationId: other.organizationId, workspaceId: otherWorkspace.workspaceId, name: 'k', role: 'organization-admin', callbackUrl: null })
      const siblingWorkspace = await createWorkspace(ctx, { organizationId: admin.organizationId, name: `Sibling ${randomBytes(3).toString('hex')}` })
      const sibling = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: siblingWorkspace.workspaceId, name: 's', role: 'workspace', callbackUrl: null })
      return [
        { whose: 'another organization', key: foreign.apiKey, workspaceId: otherWorkspace.workspaceId },
        { whose: 'a sibling workspace', key: sibling.apiKey, workspaceId: siblingWorkspace.workspaceId },
      ]
    }

    await t.test('PUT creates (201), then replaces (200); the answer is the name and dates, never the value', async (t) => {
      const first = aValue('first')
      const created = await put('shop', first)
      t.equal(created.statusCode, 201)
      t.same(created.json(), { name: 'shop', createdAt: '2026-04-01T10:00:00.000Z', updatedAt: '2026-04-01T10:00:00.000Z' })
      t.equal(created.headers.location, '/v1/secrets/shop')
      t.same(await reveal(['shop']), new Map([['shop', first]]), 'revealSecrets reads it')

      clock = new Date('2026-04-01T10:05:00.000Z')
      const second = aValue('second')
      const replaced = await put('shop', second)
      t.equal(replaced.statusCode, 200)
      t.same(replaced.json(), { name: 'shop', createdAt: '2026-04-01T10:00:00.000Z', updatedAt: '2026-04-01T10:05:00.000Z' })
      t.notOk(replaced.headers.location, 'no Location for a replacement')
      for (const response of [created, replaced]) t.notOk(response.body.includes(first) || response.body.includes(second), 'no answer holds a value')
      t.same(await reveal(['shop', 'shop', 'absent', 'not-a-name']), new Map([['shop', second]]), 'the new value; a name without a secret is absent')

      const [set1, set2] = await eventsOf()
      t.match([set1, set2], [{ type: 'SecretSet', data: { name: 'shop' } }, { type: 'SecretSet', data: { name: 'shop' } }], 'both values are in the log')
      t.notOk(await readable(set1!), "the replaced value's key is shredded: its event no longer opens")
      t.ok(await readable(set2!), 'the current one opens')
      t.same((await keyRows('shop')).map((row) => row.id), [set2!.type === 'SecretSet' ? set2!.data.keyId : 'a SecretSet'], 'one data key for the name, the current one')
    })

    await t.test('GET lists names and dates in name order, a page at a time, never a value', async (t) => {
      clock = new Date('2026-04-01T11:00:00.000Z')
      for (const name of ['zeta', 'Alpha', 'crm']) t.equal((await put(name, aValue(name))).statusCode, 201, name)
      const page = await list()
      t.same(Object.keys(page).sort(), PAGE_KEYS)
      t.match(page, { totalElements: 4, totalPages: 1, number: 0, size: 10, first: true, last: true })
      t.same(page.content.map((s) => s.name), ['Alpha', 'crm', 'shop', 'zeta'], 'by name, as code points order them')
      for (const secret of page.content) t.same(Object.keys(secret).sort(), SECRET_KEYS, `${secret.name}: name and dates only`)
      t.match(page.content[2], { name: 'shop', createdAt: '2026-04-01T10:00:00.000Z', updatedAt: '2026-04-01T10:05:00.000Z' })
      const second = await list('?size=2&page=1')
      t.same(second.content.map((s) => s.name), ['shop', 'zeta'])
      t.match(second, { totalElements: 4, totalPages: 2, number: 1, size: 2, first: false, last: true })
      t.same((await list('?page=9')).content, [], 'past the end: an empty page')
      const body = JSON.stringify(page)
      t.notOk(values.some((value) => body.includes(value)), 'no value in the list')
      for (const query of ['?size=0', '?size=101', '?page=-1']) t.equal((await app.inject({ method: 'GET', url: `/v1/secrets${query}`, headers: as(admin.apiKey) })).statusCode, 400, query)
    })

    await t.test('DELETE answers 204 and shreds: the value is gone, its events stay and no longer open', async (t) => {
      const value = aValue('temporary')
      t.equal((await put('temp', value)).statusCode, 201)
      t.equal((await put('temp', aValue('temporary-again'))).statusCode, 200)
      const response = await remove('temp')
      t.equal(response.statusCode, 204)
      t.equal(response.body, '')
      t.same(await reveal(['temp', 'shop']), new Map([['shop', values[1]]]), 'revealSecrets finds no temp; the others stay')
      t.same(await keyRows('temp'), [], 'no data key of the name is left')
      const temps = (await eventsOf()).filter((event) => event.data.name === 'temp')
      t.same(temps.map((event) => event.type), ['SecretSet', 'SecretSet', 'SecretDeleted'], 'every event of the name is still in the log')
      for (const event of temps) t.notOk(await readable(event), `${event.type}: cannot be decrypted`)
      t.notOk((await list()).content.some((s) => s.name === 'temp'), 'not listed')

      const again = await remove('temp')
      t.equal(again.statusCode, 404)
      t.same(again.json(), { statusCode: 404, message: 'no secret named "temp" in this workspace', error: 'Not Found' })
      t.equal((await remove('never_set')).statusCode, 404, 'a name never set')
      t.equal((await put('temp', aValue('back'))).statusCode, 201, 'a deleted name is free again, created anew')
    })

    await t.test("another organization's or workspace's key sees none of them and changes none", async (t) => {
      for (const { whose, key, workspaceId } of await strangers()) {
        const listed = await list('', key)
        t.match(listed, { content: [], totalElements: 0 }, `${whose}: an empty list`)
        const response = await remove('shop', key)
        t.equal(response.statusCode, 404, `${whose}: DELETE is a 404`)
        t.same(Object.keys(response.json()).sort(), ERROR_KEYS)
        const nothing = await remove('nothing_here', key)
        t.equal(response.json().message.replace('shop', '<name>'), nothing.json().message.replace('nothing_here', '<name>'), `${whose}: the answer for a name that names nothing`)
        const theirs = aValue(`theirs-${whose}`)
        t.equal((await put('shop', theirs, key)).statusCode, 201, `${whose}: a PUT makes a secret of its own workspace`)
        t.same(await reveal(['shop'], workspaceId), new Map([['shop', theirs]]), `${whose}: its own value`)
      }
      t.same(await reveal(['shop']), new Map([['shop', values[1]]]), "the admin's secret is untouched")
      t.equal((await list()).totalElements, 5)
    })

    await t.test('bad names, values and bodies are 400s in the spec shape that never quote the value', async (t) => {
      const value = aValue('refused')
      const overBytes = 8194 - value.length
      for (const name of ['has-dash', 'dot.ted', 'a'.repeat(65), 'sp%20ace', '%C3%A9']) {
        const response = await put(name, value)
        t.equal(response.statusCode, 400, `PUT ${name}`)
        t.same(response.json(), { statusCode: 400, message: 'params/name must match pattern "^[A-Za-z0-9_]{1,64}$"', error: 'Bad Request' }, `PUT ${name}`)
        t.equal((await remove(name)).statusCode, 400, `DELETE ${name}`)
      }
      const bodies: [string, unknown, string][] = [
        ['an empty value', { value: '' }, 'body/value must NOT have fewer than 1 characters'],
        ['no value', {}, "body must have required property 'value'"],
        ['a number', { value: 42 }, 'body/value must be string'],
        ['8193 characters', { value: `${value}${'x'.repeat(8193 - value.length)}` }, 'body/value must NOT have more than 8192 characters'],
        ['8194 bytes in fewer than 8192 characters', { value: `${value}${'x'.repeat(overBytes % 2)}${'é'.repeat(Math.floor(overBytes / 2))}` }, 'value must be at most 8192 bytes of UTF-8, got 8194'],
      ]
      for (const [situation, payload, message] of bodies) {
        const response = await app.inject({ method: 'PUT', url: '/v1/secrets/refused', headers: as(admin.apiKey), payload: payload as object })
        t.same(response.json(), { statusCode: 400, message, error: 'Bad Request' }, situation)
      }
      const malformed = await app.inject({ method: 'PUT', url: '/v1/secrets/refused', headers: { ...as(admin.apiKey), 'content-type': 'application/json' }, payload: `{"value": ${value}}` })
      t.match(malformed.json(), { statusCode: 400, message: /not valid JSON/, error: 'Bad Request' }, 'malformed JSON')
      t.notOk(malformed.body.includes(value), 'the 400 does not quote the text around the error')
      const text = await app.inject({ method: 'PUT', url: '/v1/secrets/refused', headers: { ...as(admin.apiKey), 'content-type': 'text/plain' }, payload: value })
      t.equal(text.statusCode, 415, 'JSON only')
      t.notOk(text.body.includes(value), 'the 415 does not quote it either')
      t.same(await keyRows('refused'), [], 'a refused value leaves no data key')
      t.equal((await put('at_limit', 'é'.repeat(4096))).statusCode, 201, 'exactly 8192 bytes')
      t.equal((await reveal(['at_limit'])).get('at_limit'), 'é'.repeat(4096))
    })

    await t.test('a workspace holds at most 100 secrets: another new name is a 409, a replacement is not', async (t) => {
      const { key, workspaceId } = (await strangers())[0]!
      for (let i = 0; i < 100; i++) t.equal((await put(`s${i}`, `v${i}`, key)).statusCode, 201, `s${i}`)
      const refused = await put('one_more', aValue('one-more'), key)
      t.same(refused.json(), { statusCode: 409, message: 'this workspace holds 100 secrets, the most it may; delete one before adding "one_more"', error: 'Conflict' })
      t.same(await keyRows('one_more', workspaceId), [], 'the refused value leaves no data key')
      t.equal((await put('s7', 'seven', key)).statusCode, 200, 'a replacement at the limit')
      t.equal((await remove('s8', key)).statusCode, 204)
      t.equal((await put('one_more', 'now', key)).statusCode, 201, 'a deletion frees a place')
      t.same(await reveal(['s7', 's8', 'one_more', 's99'], workspaceId), new Map([['s7', 'seven'], ['one_more', 'now'], ['s99', 'v99']]))
    })

    await t.test('concurrent PUTs of one name: the last recorded value wins, and only its key is left', async (t) => {
      const raced = Array.from({ length: 6 }, (_, i) => aValue(`raced-${i}`))
      const responses = await Promise.all(raced.map((value) => put('raced', value)))
      t.same(responses.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 201], 'one created it, the others replaced it')
      const sets = (await eventsOf()).filter((event) => event.type === 'SecretSet' && event.data.name === 'raced')
      const last = sets.at(-1)!
      t.equal(sets.length, 6)
      t.same((await keyRows('raced')).map((row) => row.id), [last.type === 'SecretSet' ? last.data.keyId : 'a SecretSet'], "one data key left: the last event's")
      const value = (await reveal(['raced'])).get('raced')
      t.ok(value !== undefined && raced.includes(value), 'revealSecrets reads the value the last event holds')
      for (const event of sets.slice(0, -1)) t.notOk(await readable(event), 'each earlier value is shredded')
    })

    await t.test("a key a writer left behind goes with the name's next write; a write in flight keeps its key", async (t) => {
      // A writer stopped between recording its value and shredding the one it replaced: the key of
      // an earlier version of the stream is left.
      const left = await keyring.issue(ws, 'shop')
      await storage.db.updateTable('secret_keys').set({ set_version: 1 }).where('id', '=', left.keyId).execute()
      // A PUT that has stored its key and not yet recorded its value.
      const inFlight = await keyring.issue(ws, 'shop')
      t.equal((await put('shop', values[1])).statusCode, 200)
      const ids = (await keyRows('shop')).map((row) => row.id)
      t.notOk(ids.includes(left.keyId), 'the left key is shredded')
      t.ok(ids.includes(inFlight.keyId), 'the key of the write in flight stays')
      t.equal(ids.length, 2, 'beside the current one')
      await keyring.shred(ws, [inFlight.keyId])
    })

    await t.test('no value is anywhere in the database, nor in what the app logged', async (t) => {
      t.ok(values.length >= 10, `${values.length} values stored or refused`)
      const encodings = (value: string) => [value, ...(['base64', 'base64url', 'hex'] as const).map((encoding) => Buffer.from(value).toString(encoding))]
      const found = (text: string) => values.flatMap(encodings).filter((value) => text.includes(value))
      const events = await sql<{ data: string; metadata: string }>`select data::text as data, metadata::text as metadata from events`.execute(storage.db)
      t.ok(events.rows.some((row) => row.data.includes('"SecretSet"') || row.data.includes('"ciphertext"')), `${events.rows.length} events, the secrets' among them`)
      t.same(found(events.rows.map((row) => `${row.data}\n${row.metadata}`).join('\n')), [], "no event's data or metadata holds a value, in clear or encoded")
      const { rows: tables } = await sql<{ name: string }>`
        select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(storage.db)
      t.ok(tables.some((table) => table.name === 'secret_keys'))
      for (const { name } of tables) {
        const { rows } = await sql<{ row: string }>`select to_jsonb(r)::text as row from ${sql.table(name)} as r`.execute(storage.db)
        t.same(found(rows.map((r) => r.row).join('\n')), [], `${name}: no row holds a value`)
      }
      const logged = logs.text()
      t.ok(logged.includes('/v1/secrets/shop') && logged.includes('"statusCode":400'), 'the requests were logged')
      t.same(found(logged), [], 'no log line holds a value')
    })

    await t.test('rewrap moves every data key to a new master key, and the values stay readable', async (t) => {
      const before = await reveal(['shop', 'crm', 'zeta', 'Alpha'])
      t.equal(before.size, 4)
      const newMaster = masterKey(randomBytes(32))
      const rotating = new SecretKeyring(storage.db, { current: newMaster, previous: testSecretsMasterKeys.current, source: 'SECRETS_KEY' })
      const newOnly = new SecretKeyring(storage.db, { current: newMaster, previous: undefined, source: 'SECRETS_KEY' })
      await t.rejects(reveal(['shop'], ws, newOnly), MasterKeyMissingError, 'before: the new key alone opens nothing, and says why')
      t.same(await reveal(['shop', 'crm', 'zeta', 'Alpha'], ws, rotating), before, 'during the rotation, either key unwraps')

      const stray = new SecretKeyring(storage.db, { current: masterKey(randomBytes(32)), previous: undefined, source: 'DATA_DIR' })
      await stray.issue(ws, 'stray')
      const { count } = await storage.db.selectFrom('secret_keys').select((eb) => eb.fn.countAll<string>().as('count')).where('master_key_id', '=', testSecretsMasterKeys.current.id).executeTakeFirstOrThrow()
      const report = await rotating.rewrap()
      t.same(report, { masterKeyId: newMaster.id, rewrapped: Number(count), unknown: [{ masterKeyId: stray.masterKeyId, keys: 1 }], broken: [] }, 'every key of the old master key, and the stray one reported')
      t.ok(report.rewrapped >= 100, `${report.rewrapped} keys re-wrapped`)
      t.same(await reveal(['shop', 'crm', 'zeta', 'Alpha'], ws, newOnly), before, 'the new key alone reads every value')
      await t.rejects(reveal(['shop'], ws, keyring), MasterKeyMissingError, 'the old key alone no longer does')
      t.same((await rotating.rewrap()).rewrapped, 0, 'a second run has nothing to do')
    })
  })
}
