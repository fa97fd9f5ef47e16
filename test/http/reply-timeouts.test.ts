import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Flows that wait for time, as an integrator sees them: webhooks at a real HTTPS receiver, the
// pending timer in GET /v1/sessions/{id}, and the events of the session. Timers are the engine's
// own (docs/timers.md); one scenario waits for them in real time, the others move the clock.

const text = (body: string) => ({ type: 'text', text: { body } })
const node = (id: string, type: string, data: object) => ({ id, type, position: { x: 0, y: 0 }, data })

/** Asks for an order number with a reply timeout and one reminder; a reply is thanked, silence said goodbye to. */
const askWithTimeout = (seconds: number, reminderAfter: number, timeoutEdge = true) => ({
  schemaVersion: 1,
  nodes: [
    node('start', 'start', {}),
    node('ask', 'question', { prompt: text('Your order number?'), input: { kind: 'text' }, timeout: { seconds, reminders: [{ afterSeconds: reminderAfter, message: text('Still there?') }] } }),
    node('thanks', 'message', { messages: [text('Thanks!')] }),
    ...(timeoutEdge ? [node('bye', 'message', { messages: [text('Closing this chat, write again any time.')] })] : []),
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'thanks' },
    ...(timeoutEdge ? [{ id: 'c', source: 'ask', sourceHandle: 'timeout', target: 'bye' }] : []),
  ],
})

/** Says it checks, pauses 30 s, then asks a question that echoes the reply. */
const pauseThenAsk = {
  schemaVersion: 1,
  nodes: [
    node('start', 'start', {}),
    node('checking', 'message', { messages: [text('Let me check…')] }),
    node('pause', 'delay', { seconds: 30 }),
    node('ask', 'question', { prompt: text('Found it. Anything else?'), input: { kind: 'text' }, saveAs: 'said' }),
    node('echo', 'message', { messages: [text('You said {{said}}')] }),
  ],
  edges: [
    { id: 'a', source: 'start', target: 'checking' },
    { id: 'b', source: 'checking', target: 'pause' },
    { id: 'c', source: 'pause', target: 'ask' },
    { id: 'd', source: 'ask', sourceHandle: 'default', target: 'echo' },
  ],
}

interface Delivered {
  sessionId: string
  messageId: string
  changes: { field: string; value: { messages?: { text?: { body: string } }[]; functions?: { type: string; reason?: string }[] } }[]
}

// Each store's flows wait seconds of real time: the stores wait side by side.
t.test('flows that wait for time', { jobs: reachableBackends.length }, async (t) => {
  for (const backend of reachableBackends) {
    t.test(`on ${backend.name}`, async (t) => {
      const receiver = await startHttpsReceiver()
      t.teardown(() => receiver.close())
      const loopback = ['127.0.0.1/32']
      let clock: Date | undefined
      const { app, admin, conversations } = await openTestApp(t, backend, {
        config: loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: loopback.join(','), RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' }),
        engine: true,
        now: () => clock ?? new Date(),
        webhooks: { allowedPrivateCidrs: loopback, caFile: receiver.caFile },
      })
      const created = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'bot', callbackUrl: `${receiver.url}/hooks` } })
      const { apiKey, signingSecret } = created.json()
      const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
        const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) })
        return { status: response.statusCode, json: response.body ? response.json() : undefined }
      }
      const ok = async (method: 'GET' | 'POST', url: string, payload?: object) => {
        const response = await call(method, url, payload)
        if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.json)}`)
        return response.json
      }
      await ok('POST', '/v1/variables', { name: 'said', type: 'string' })
      const flowOf = async (name: string, definition: object) => {
        const flow = await ok('POST', '/v1/flows', { name, definition })
        return flow.id as string
      }
      /** The verified webhooks of a session so far, in the order they came. */
      const webhooksOf = (sessionId: string): Delivered[] =>
        receiver.requests
          .map((r) => new Webhook(signingSecret).verify(r.body, Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]))) as Delivered)
          .filter((body) => body.sessionId === sessionId)
      const webhooks = (sessionId: string, count: number) =>
        eventually(`${count} webhooks of ${sessionId}`, () => {
          const got = webhooksOf(sessionId)
          return got.length >= count ? got : undefined
        })
      const textsOf = (body: Delivered) => body.changes.flatMap((change) => change.value.messages?.map((m) => m.text?.body) ?? [])
      const functionsOf = (body: Delivered) => body.changes.flatMap((change) => change.value.functions ?? [])
      const eventsOf = async (sessionId: string): Promise<{ type: string; data: { messageId?: string } }[]> => (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
      /** Moves the clock past the session's pending timer and fires what is due. */
      const passTimer = async (sessionId: string) => {
        const { timer } = await ok('GET', `/v1/sessions/${sessionId}`)
        clock = new Date(Date.parse(timer.dueAt) + 1)
        await conversations!.sweeper.fireTimers()
      }
      t.teardown(() => (clock = undefined))

      await t.test('a reminder at 3 s and a timeout at 6 s reach the callback as they come, in real time', async (t) => {
        const flowId = await flowOf('Order number', askWithTimeout(6, 3))
        const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
        const [prompt] = await webhooks(sessionId, 1)
        t.same(textsOf(prompt!), ['Your order number?'])
        const waiting = await ok('GET', `/v1/sessions/${sessionId}`)
        t.equal(waiting.waitingAt, 'ask')
        t.equal(waiting.timer.nodeId, 'ask')
        const started = (await eventsOf(sessionId)).find((e) => e.type === 'TurnCompleted') as unknown as { data: { completedAt: string } }
        t.equal(Date.parse(waiting.timer.dueAt) - Date.parse(started.data.completedAt), 3000, 'the first timer is the reminder, 3 s after the prompt')

        const all = await webhooks(sessionId, 3)
        t.same(all.map(textsOf), [['Your order number?'], ['Still there?'], ['Closing this chat, write again any time.']], 'the reminder, then the timeout exit, each in a webhook of its own')
        t.same(functionsOf(all[2]!).map((f) => f.type), ['finish'])
        const events = await eventsOf(sessionId)
        const fired = events.filter((e) => e.type === 'TimerFired')
        t.equal(fired.length, 2, 'two timers fired: the reminder and the timeout')
        t.same(all.slice(1).map((body) => body.messageId), fired.map((e) => e.data.messageId), "each webhook's messageId is its TimerFired event's")
        t.equal(events.filter((e) => e.type === 'MessageReceived').length, 0, 'no message was sent to the session')
        const ended = await ok('GET', `/v1/sessions/${sessionId}`)
        t.same([ended.status, ended.timer], ['completed', null])
      })

      await t.test('a reply before the reminder cancels both', async (t) => {
        const flowId = await flowOf('Answered', askWithTimeout(60, 20))
        const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
        await webhooks(sessionId, 1)
        await ok('POST', `/v1/sessions/${sessionId}/message`, text('A-123'))
        const answered = await webhooks(sessionId, 2)
        t.same(textsOf(answered[1]!), ['Thanks!'])
        t.equal((await ok('GET', `/v1/sessions/${sessionId}`)).timer, null, 'no timer is pending')
        clock = new Date(Date.now() + 120_000)
        t.teardown(() => (clock = undefined))
        t.equal(await conversations!.sweeper.fireTimers(), 0, 'the timer rows due find the wait over and fire nothing')
        t.equal((await eventsOf(sessionId)).filter((e) => e.type === 'TimerFired').length, 0)
        t.equal(webhooksOf(sessionId).length, 2)
      })

      await t.test('with no timeout edge the session finishes, its finish saying timeout', async (t) => {
        const flowId = await flowOf('No edge', askWithTimeout(60, 20, false))
        const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
        await webhooks(sessionId, 1)
        await passTimer(sessionId)
        await webhooks(sessionId, 2)
        await passTimer(sessionId)
        const all = await webhooks(sessionId, 3)
        t.same(textsOf(all[2]!), [], 'nothing is said')
        t.match(functionsOf(all[2]!), [{ type: 'finish', reason: 'timeout' }])
        clock = undefined
      })

      await t.test('a delay: its end continues in a new webhook, and a message during it is answered after it', async (t) => {
        const flowId = await flowOf('Pause', pauseThenAsk)
        const { sessionId } = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
        const [first] = await webhooks(sessionId, 1)
        t.same(textsOf(first!), ['Let me check…'])
        const paused = await ok('GET', `/v1/sessions/${sessionId}`)
        t.same([paused.waitingAt, paused.timer.nodeId], ['pause', 'pause'])
        await ok('POST', `/v1/sessions/${sessionId}/message`, text('hello?'))
        await eventually('the message to be held', async () => ((await ok('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
        t.equal(webhooksOf(sessionId).length, 1, 'the held message gets no webhook yet')
        await passTimer(sessionId)
        const all = await webhooks(sessionId, 2)
        t.same(textsOf(all[1]!), ['Found it. Anything else?', 'You said hello?'], 'the flow goes on, then answers what came during the delay')
        clock = undefined
      })

      await t.test("a preview's timer fires on demand; a live session's does not", async (t) => {
        const flowId = await flowOf('Preview', askWithTimeout(3600, 600))
        const preview = await ok('POST', `/v1/flows/${flowId}/preview-sessions`)
        await eventually('the preview to wait', async () => ((await ok('GET', `/v1/sessions/${preview.sessionId}`)).timer ? true : undefined))
        const turns = (count: number) =>
          eventually(`${count} turns of the preview`, async () => {
            const events = await eventsOf(preview.sessionId)
            return events.filter((e) => e.type === 'TurnCompleted').length >= count ? events : undefined
          })
        const fired = await call('POST', `/v1/sessions/${preview.sessionId}/timer/fire`)
        t.equal(fired.status, 202)
        const reminded = await turns(2)
        const timerEvents = reminded.filter((e) => e.type === 'TimerFired')
        t.equal(timerEvents.length, 1, 'fired once')
        t.equal(timerEvents[0]!.data.messageId, fired.json.messageId, 'its turn answers the trigger the call named')
        const next = (await ok('GET', `/v1/sessions/${preview.sessionId}`)).timer
        t.ok(Date.parse(next.dueAt) > Date.now() + 3000_000, 'the timeout, an hour after the prompt, is pending next')
        const timedOut = await call('POST', `/v1/sessions/${preview.sessionId}/timer/fire`)
        t.equal(timedOut.status, 202)
        t.not(timedOut.json.messageId, fired.json.messageId, 'the next timer is another trigger')
        await turns(3)
        t.equal((await ok('GET', `/v1/sessions/${preview.sessionId}`)).status, 'completed', 'the timeout ended the preview by its exit')

        const live = await ok('POST', `/v1/sessions/flows/${flowId}/create`)
        await webhooks(live.sessionId, 1)
        const refused = await call('POST', `/v1/sessions/${live.sessionId}/timer/fire`)
        t.equal(refused.status, 409)
        t.match(refused.json, { statusCode: 409, message: /preview/ })
        const noTimer = await ok('POST', `/v1/flows/${await flowOf('Echo', pauseThenAsk)}/preview-sessions`)
        await eventually('the pause', async () => ((await ok('GET', `/v1/sessions/${noTimer.sessionId}`)).timer ? true : undefined))
        await ok('POST', `/v1/sessions/${noTimer.sessionId}/timer/fire`)
        await eventually('the question', async () => ((await ok('GET', `/v1/sessions/${noTimer.sessionId}`)).waitingAt === 'ask' ? true : undefined))
        const none = await call('POST', `/v1/sessions/${noTimer.sessionId}/timer/fire`)
        t.same([none.status, none.json.message], [409, 'the session has no pending timer'])
        t.equal((await call('POST', '/v1/sessions/00000000-0000-4000-8000-000000000000/timer/fire')).status, 404)
      })
    })
  }
})
