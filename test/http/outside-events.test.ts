import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { dueTimers } from '../../src/engine/timers.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

/** Asks to pay, waits for `payment.confirmed` (two minutes at most) and thanks for the amount, or says it gave up. */
const awaitPayment = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ready', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Ready to pay?' } }, input: { kind: 'text' } } },
    { id: 'wait', type: 'waitForEvent', position: { x: 400, y: 0 }, data: { event: 'payment.confirmed', timeoutSeconds: 120, saveAs: 'payment' } },
    { id: 'thanks', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Paid {{payment.amount}}, thank you' } }] } },
    { id: 'late', type: 'message', position: { x: 600, y: 200 }, data: { messages: [{ type: 'text', text: { body: 'No payment came' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ready' },
    { id: 'b', source: 'ready', sourceHandle: 'default', target: 'wait' },
    { id: 'c', source: 'wait', sourceHandle: 'received', target: 'thanks' },
    { id: 'd', source: 'wait', sourceHandle: 'timeout', target: 'late' },
  ],
}

for (const backend of apiBackends) {
  t.test(`a flow waits for an outside event, on ${backend.name}`, async (t) => {
    let clock: Date | undefined
    const { app, admin, ctx, conversations, storage } = await openTestApp(t, backend, { engine: true, now: () => clock ?? new Date() })
    const call = async (method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = {}, apiKey = admin.apiKey) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey, ...headers }, ...(payload ? { payload } : {}) })
      return { status: response.statusCode, json: response.body ? response.json() : undefined }
    }
    const ok = async (method: 'GET' | 'POST', url: string, payload?: object, headers?: Record<string, string>) => {
      const response = await call(method, url, payload, headers)
      if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.json)}`)
      return response.json
    }
    await ok('POST', '/v1/variables', { name: 'payment', type: 'object' })
    const flow = await ok('POST', '/v1/flows', { name: 'Payment', definition: awaitPayment })
    /** What the flow said so far, once it has answered every trigger it got. */
    const said = async (sessionId: string): Promise<string[]> => {
      await eventually(`session ${sessionId} to settle`, async () => ((await ok('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
      const events = (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
      return events
        .filter((e: { type: string }) => e.type === 'TurnCompleted')
        .flatMap((e: { data: { output: { messages: { text?: { body: string } }[] } } }) => e.data.output.messages.map((m) => m.text?.body ?? ''))
    }
    const started = async () => (await ok('POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string
    const confirm = (sessionId: string, amount: number, headers?: Record<string, string>) => call('POST', `/v1/sessions/${sessionId}/events`, { name: 'payment.confirmed', data: { amount } }, headers)

    await t.test('an event posted before the wait is kept and taken', async (t) => {
      const sessionId = await started()
      t.equal((await confirm(sessionId, 10)).status, 202)
      await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'yes' } })
      t.same(await said(sessionId), ['Ready to pay?', 'Paid 10, thank you'])
    })

    await t.test('an event posted during the wait resumes the flow, once for one Idempotency-Key', async (t) => {
      const sessionId = await started()
      await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'yes' } })
      t.same(await said(sessionId), ['Ready to pay?'], 'it waits')
      const first = await confirm(sessionId, 25, { 'idempotency-key': 'pay-1' })
      const again = await confirm(sessionId, 25, { 'idempotency-key': 'pay-1' })
      t.equal(first.status, 202)
      t.equal(again.json.eventId, first.json.eventId, 'the retry answers the same event')
      t.same(await said(sessionId), ['Ready to pay?', 'Paid 25, thank you'], 'the flow goes on once')
      const events = (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
      t.equal(events.filter((e: { type: string }) => e.type === 'OutsideEventReceived').length, 1)
      t.match((await ok('GET', `/v1/sessions/${sessionId}`)).status, 'completed')
      t.equal((await confirm(sessionId, 1)).status, 409, 'a session no longer active refuses events')
    })

    await t.test('no event: the wait leaves by timeout once its time passes, with no message sent', async (t) => {
      const sessionId = await started()
      await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'yes' } })
      t.same(await said(sessionId), ['Ready to pay?'])
      const inAnHour = new Date(Date.now() + 3600_000)
      const timer = await eventually('the wait to be timed', async () => (await dueTimers(storage.db, inAnHour, 100)).find((due) => due.sessionId === sessionId))
      t.equal(Date.parse(timer.until) - Date.parse((await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content.at(-1).data.completedAt), 120_000, 'due timeoutSeconds after the wait began')
      clock = new Date(Date.parse(timer.until) + 1)
      t.teardown(() => (clock = undefined))
      // The engine's own sweeps fire it too; whichever comes first, it fires one turn.
      const after = await eventually('the timer to fire', async () => {
        await conversations!.sweeper.fireTimers()
        const lines = await said(sessionId)
        return lines.length > 1 ? lines : undefined
      })
      t.same(after, ['Ready to pay?', 'No payment came'])
      const events = (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
      t.equal(events.filter((e: { type: string }) => e.type === 'TimerFired').length, 1, 'the timer fired once')
      t.equal(events.filter((e: { type: string }) => e.type === 'MessageReceived').length, 1, 'no message was sent to wake it')
    })

    await t.test('bad posts get the error shape', async (t) => {
      const sessionId = await started()
      const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: null })
      t.equal((await call('POST', `/v1/sessions/${sessionId}/events`, { name: 'payment.confirmed' }, {}, other.apiKey)).status, 404, "another organization's key")
      t.equal((await call('POST', `/v1/sessions/00000000-0000-4000-8000-000000000000/events`, { name: 'x' })).status, 404, 'an unknown session')
      const badName = await call('POST', `/v1/sessions/${sessionId}/events`, { name: 'has spaces' })
      t.equal(badName.status, 400)
      t.match(badName.json, { statusCode: 400, message: /name/ })
      const large = await call('POST', `/v1/sessions/${sessionId}/events`, { name: 'big', data: { blob: 'x'.repeat(20_000) } })
      t.equal(large.status, 400)
      t.match(large.json.message, /data/)
    })
  })
}
