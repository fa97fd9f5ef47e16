import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { BadRequestError } from '../../src/errors.js'
import type { Resolver } from '../../src/webhooks/callback-url.js'
import { openTestApp } from '../helpers/app.js'
import { BLOCKED_NAMES, PUBLIC_NAME, PUBLIC_NAMES, blockedCallbacks, fakeDns } from '../helpers/blocked-callbacks.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Every form of a non-public callback is refused where a key's callback is stored (create and
// update) and again where it is used (delivery). Names are answered by a fake DNS. Delivery has no
// private range allowed, never learns a public-only name, and gets public answers last, so even a
// broken check would land on the local receiver (and be counted) before any public address.

const expectRefused = (t: Test, response: LightMyRequestResponse, reason: RegExp, what: string) => {
  t.equal(response.statusCode, 400, `${what}: 400`)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], `${what}: the spec error shape`)
  t.match(body, { statusCode: 400, error: 'Bad Request', message: reason }, `${what}: ${reason}`)
}

/** A name whose resolution never finishes. */
const SLOW_NAME = 'slow.webhooks.test'
const creationDns = fakeDns({ ...BLOCKED_NAMES, ...PUBLIC_NAMES })
const resolveHost: Resolver = (name) => (name === SLOW_NAME ? new Promise(() => {}) : creationDns(name))

const echoFlow = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Say something' } }, input: { kind: 'text' }, saveAs: 'said' } },
  ],
  edges: [{ id: 'a', source: 'start', target: 'ask' }],
}

for (const backend of apiBackends) {
  t.test(`callback SSRF checks on ${backend.name}`, async (t) => {
    const receiver = await startHttpsReceiver()
    t.teardown(() => receiver.close())
    const forms = blockedCallbacks(receiver.port)
    t.ok(forms.length >= 25, `${forms.length} forms`)
    const h = await openTestApp(t, backend, {
      engine: true,
      resolveHost,
      // Every form is attempted once, whatever the others did: the blocked attempts, all to one
      // destination here, would otherwise make it failing and hold the rest behind its probes.
      webhooks: { allowedPrivateCidrs: [], caFile: receiver.caFile, lookup: fakeDns(BLOCKED_NAMES, { publicLast: true }), retrySchedule: [0], health: { failuresBeforeFailing: 1000 } },
    })
    const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, key = h.admin.apiKey) =>
      h.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
    const keyCount = async () => (await inject('GET', '/v1/api-keys')).json().totalElements as number

    const created = await inject('POST', '/v1/api-keys', { name: 'bot', callbackUrl: `https://${PUBLIC_NAME}/hooks` })
    t.equal(created.statusCode, 201, 'a name resolving to public addresses only is accepted')
    const bot = created.json() as { id: string; apiKey: string; callbackUrl: string }

    await t.test('every form is refused by POST and PATCH /v1/api-keys', async (t) => {
      const before = await keyCount()
      for (const { url, reason } of forms) {
        expectRefused(t, await inject('POST', '/v1/api-keys', { name: 'evil', callbackUrl: url }), reason, `POST ${url}`)
        expectRefused(t, await inject('PATCH', `/v1/api-keys/${bot.id}`, { callbackUrl: url }), reason, `PATCH ${url}`)
      }
      t.equal(await keyCount(), before, 'no key was created')
      const [listed] = (await inject('GET', '/v1/api-keys')).json().content.filter((k: { id: string }) => k.id === bot.id)
      t.equal(listed.callbackUrl, `https://${PUBLIC_NAME}/hooks`, 'no callback was changed')
    })

    await t.test('bootstrap refuses a name resolving to a private address before creating anything', async (t) => {
      await t.rejects(
        bootstrap(h.ctx, { organization: 'Evil', workspace: 'W', callbackUrl: `https://mixed.webhooks.test:${receiver.port}/x` }, { resolve: resolveHost }),
        { constructor: BadRequestError, message: /mixed\.webhooks\.test resolves to .*non-public address \(127\.0\.0\.1\)/ },
      )
      t.equal(await h.store.count({ streamPrefixes: ['organization-'] }), 1, 'only the test organization exists')
    })

    await t.test('a name that does not resolve is accepted: delivery checks it again', async (t) => {
      const unknown = await inject('POST', '/v1/api-keys', { name: 'later', callbackUrl: 'https://nowhere.webhooks.test/x' })
      t.equal(unknown.statusCode, 201, 'ENOTFOUND')
      // How long it waits is timed with mocked timers in callback-url.test.ts.
      const slow = await inject('PATCH', `/v1/api-keys/${unknown.json().id}`, { callbackUrl: `https://${SLOW_NAME}/x` })
      t.equal(slow.statusCode, 200, 'a resolution that never answers is given up')
    })

    await t.test('at delivery every form fails as blocked and the receiver gets nothing', async (t) => {
      // The API refuses these URLs, which is the point: so the test writes them into the delivery
      // rows itself. The dispatcher is stopped until then, and could not have reached the key's
      // real callback anyway: delivery's DNS does not know the public-only name.
      await h.webhooks!.stop()
      t.equal((await inject('POST', '/v1/variables', { name: 'said', type: 'string' }, bot.apiKey)).statusCode, 201)
      const flow = await inject('POST', '/v1/flows', { name: 'Echo', definition: echoFlow }, bot.apiKey)
      t.equal(flow.statusCode, 201)
      const sessions: string[] = []
      for (const _ of forms) {
        const session = await inject('POST', `/v1/sessions/flows/${flow.json().id}/create`, {}, bot.apiKey)
        t.equal(session.statusCode, 201)
        sessions.push(session.json().sessionId)
      }
      const db = h.storage.db
      await eventually('a delivery for every session', async () => {
        const rows = await db.selectFrom('webhook_deliveries').select('session_id').where('status', '=', 'pending').execute()
        return rows.length === forms.length ? rows : undefined
      })
      for (const [i, form] of forms.entries()) {
        await db.updateTable('webhook_deliveries').set({ callback_url: form.url }).where('session_id', '=', sessions[i]!).execute()
      }
      h.webhooks!.start()

      const done = await eventually('every delivery attempted', async () => {
        const page = (await inject('GET', '/v1/webhooks/deliveries?size=100', undefined, bot.apiKey)).json()
        const deliveries = page.content as { sessionId: string; status: string; callbackUrl: string; attempts: { statusCode: number | null; error: string | null }[] }[]
        return deliveries.length === forms.length && deliveries.every((d) => d.status === 'dead' || d.status === 'delivered') ? deliveries : undefined
      })
      for (const [i, form] of forms.entries()) {
        const delivery = done.find((d) => d.sessionId === sessions[i])
        t.equal(delivery?.callbackUrl, form.url, `the delivery of ${form.url}`)
        t.equal(delivery?.status, 'dead', `${form.url}: dead`)
        t.equal(delivery?.attempts.length, 1, `${form.url}: one attempt`)
        t.equal(delivery?.attempts[0]?.statusCode, null, `${form.url}: no response`)
        t.match(delivery?.attempts[0]?.error, /^blocked: /, `${form.url}: blocked`)
        t.match(delivery?.attempts[0]?.error, form.reason, `${form.url}: ${form.reason}`)
      }
      t.equal(receiver.requests.length, 0, 'zero requests reached the receiver')
    })
  })
}
