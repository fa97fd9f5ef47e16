import t from 'tap'
import { orderLookup } from '../fixtures/order-lookup.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { EXIT_TIMEOUT_MS, adminKey, startService, storageKinds, until, within } from '../helpers/service-process.js'

// Acceptance: SIGKILL of the engine while a flow's HTTP call is in flight. After a restart the turn
// completes exactly once; the call is made again, since no answer was recorded (docs/flow-definition.md).

const storage = storageKinds.at(-1)!

t.test(`a call in flight when the engine dies is made again after a restart, on ${storage.name}`, async (t) => {
  const api = await startHttpsReceiver()
  t.teardown(() => api.close())
  const setup = await storage.prepare(t, { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: api.caFile, LOG_LEVEL: 'info' })
  const first = await startService(t, setup.env)
  const apiKey = await adminKey(setup, first)
  const call = async (base: string, method: string, path: string, body?: object) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    })
    const text = await response.text()
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return text ? JSON.parse(text) : undefined
  }
  for (const [name, type] of [['order', 'string'], ['status', 'string'], ['httpStatus', 'number']]) await call(first.base, 'POST', '/v1/variables', { name, type })
  await call(first.base, 'PUT', '/v1/secrets/shop', { value: 'tok-kill-test' })
  const flow = await call(first.base, 'POST', '/v1/flows', { name: 'Orders', definition: orderLookup(api.url) })
  const { sessionId } = await call(first.base, 'POST', `/v1/sessions/flows/${flow.id}/create`)

  const release = api.hold()
  await call(first.base, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: '1234' } })
  await until(first, 'the call to reach the API', 20_000, async () => api.requests.length === 1)
  first.child.kill('SIGKILL')
  await within(first.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')
  api.respondWith([{ status: 200, body: JSON.stringify({ status: 'shipped' }) }])
  release()

  const second = await startService(t, setup.env)
  const events = async () => (await call(second.base, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { type: string; data: any }[]
  await until(second, 'the turn to complete after the restart', 30_000, async () => (await events()).filter((e) => e.type === 'TurnCompleted').length === 2)
  const recorded = await events()
  const turns = recorded.filter((e) => e.type === 'TurnCompleted')
  t.equal(turns.length, 2, 'exactly one TurnCompleted for the message, after the start turn')
  t.same(turns[1]!.data.output.messages.map((m: { text: { body: string } }) => m.text.body), ['Your order is shipped'])
  t.equal(recorded.filter((e) => e.type === 'OutsideCallAnswered').length, 1, 'one answer recorded')
  t.equal(api.requests.length, 2, 'the call was made again, as documented: no answer had been recorded')
  t.same(api.requests.map((r) => r.path), ['/orders/1234', '/orders/1234'])
})
