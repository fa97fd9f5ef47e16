import t, { type Test } from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { sessionLogsProjection } from '../../src/projections/session-logs.js'
import { openTestApp } from '../helpers/app.js'
import { plansFlow } from '../helpers/flows.js'
import { apiBackends } from '../helpers/storage.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Asks, answers `You said …` with the reply saved in `name`, and asks again, for ever. */
const echoForever = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Say something' } }, input: { kind: 'text' }, saveAs: 'name' } },
    { id: 'say', type: 'message', position: { x: 400, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'You said {{name}}' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'say' },
    { id: 'c', source: 'say', target: 'ask' },
  ],
}

for (const backend of apiBackends) {
  t.test(`a conversation end to end on ${backend.name}`, async (t) => {
    let clock: Date | undefined
    const { app, ctx, conversations, storage, store, readModels } = await openTestApp(t, backend, { engine: true, now: () => clock ?? new Date() })
    /** The sweeper finds idle sessions in the session log, a read model: it must hold every event written so far. */
    const logsCaughtUp = async (t: Test) => {
      const lagging = (await readModels.status(5000)).filter((status) => !status.caughtUp).map((status) => status.name)
      t.same(lagging, [], 'the read models hold every event written so far')
    }
    /** An organization of its own with the variables name and plan, a pipeline Leads, a sector Sales and the flow Plans using them. */
    const arrange = async () => {
      const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
      const headers = { 'x-api-key': admin.apiKey }
      const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
        const response = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
        if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
        return response.body ? response.json() : undefined
      }
      /** Waits until the engine has answered every message the session received. */
      const settled = async (sessionId: string) => {
        for (let i = 0; i < 200; i++) {
          const detail = await call('GET', `/v1/sessions/${sessionId}`)
          if (detail.pendingMessages === 0) return detail
          await sleep(25)
        }
        throw new Error(`session ${sessionId} still has pending messages`)
      }
      /** The session's log entry once the log shows it finished. */
      const finishedLog = async (sessionId: string) => {
        for (let i = 0; i < 200; i++) {
          const log = (await call('GET', `/v1/sessions/logs?sessionId=${sessionId}`)).content[0]
          if (log.status !== 'running') return log
          await sleep(25)
        }
        throw new Error(`the log of session ${sessionId} still shows it running`)
      }
      const turns = async (sessionId: string) =>
        (await call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content.filter((e: { type: string }) => e.type === 'TurnCompleted')

      await call('POST', '/v1/variables', { name: 'name', type: 'string' })
      await call('POST', '/v1/variables', { name: 'plan', type: 'string' })
      const pipeline = await call('POST', '/v1/kanban/pipelines', {
        name: 'Leads',
        stages: [{ name: 'New', color: '#2196F3' }, { name: 'Qualified', color: '#4CAF50' }],
        fields: [{ name: 'Plan', type: 'text', required: false, isFeatured: true }],
      })
      const [newStage, qualified] = pipeline.stages
      const planField = pipeline.fields[0].id
      await call('POST', '/v1/sectors', { name: 'Sales' })
      const sector = (await call('GET', '/v1/sectors')).content[0]

      const definition = plansFlow({
        pipelineId: pipeline.id,
        stageIds: [newStage.id, qualified.id],
        sectorId: sector.id,
        leadValues: { [planField]: '{{plan}}' },
        retryMessage: { type: 'text', text: { body: 'Please tap one of the buttons.' } },
        greetingTags: ['greeting'],
      })
      const flow = await call('POST', '/v1/flows', { name: 'Plans', definition })
      return { admin, headers, call, settled, finishedLog, turns, pipeline, newStage, qualified, planField, sector, flow }
    }

    await t.test('question, condition, kanbanMove and transfer, answered by button id', async (t) => {
      const { headers, call, settled, finishedLog, turns, pipeline, newStage, qualified, planField, sector, flow } = await arrange()
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { name: 'Ana' } })
      await settled(sessionId)
      t.equal((await call('GET', `/v1/sessions/logs?sessionId=${sessionId}`)).content[0].status, 'running')
      const [first] = await turns(sessionId)
      t.same(first.data.output.messages.map((m: { type: string; nodeId: string }) => [m.type, m.nodeId]), [['text', 'hello'], ['interactive', 'ask']])
      t.same(first.data.output.messages[0], { type: 'text', text: { body: 'Hi Ana!' }, tags: ['greeting'], nodeId: 'hello' })

      await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } })
      const detail = await settled(sessionId)
      t.equal(detail.status, 'completed')
      t.same(detail.variables, { name: 'Ana', plan: 'pro' })

      const second = (await turns(sessionId))[1].data.output
      t.same(second.visited, ['ask', 'check', 'lead', 'qualify', 'human'], 'every step of the turn is recorded')
      t.same(second.functions.map((f: { type: string }) => f.type), ['transfer'])
      t.match(second.functions[0], { targetType: 'sector', targetId: sector.id })
      t.same(second.kanban.map((k: { action: string; stageId: string }) => [k.action, k.stageId]), [['create', newStage.id], ['move', qualified.id]])
      t.ok(second.kanban[0].timestamp < second.kanban[1].timestamp && second.kanban[1].timestamp < second.functions[0].timestamp, 'timestamps strictly increase')

      const log = await finishedLog(sessionId)
      t.equal(log.status, 'completed', 'the log follows the engine')
      t.match(log.finishedAt, /Z$/)

      let cards: { content: { sessionId: string; stageId: string; values: Record<string, unknown>; tags: string[] }[] } = { content: [] }
      for (let i = 0; i < 100 && cards.content[0]?.stageId !== qualified.id; i++) {
        cards = await call('GET', `/v1/kanban/pipelines/${pipeline.id}/cards`)
        await sleep(25)
      }
      t.equal(cards.content.length, 1)
      t.match(cards.content[0], { sessionId, stageId: qualified.id, values: { [planField]: 'pro' }, tags: ['lead'] })

      const late = await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers, payload: { type: 'text', text: { body: 'still there?' } } })
      t.equal(late.statusCode, 409)
      t.same(late.json(), { statusCode: 409, message: 'Session is not active', error: 'Conflict' })
    })

    await t.test('invalid replies retry, then follow the invalid handle', async (t) => {
      const { call, settled, finishedLog, turns, flow } = await arrange()
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { name: 'Bo' } })
      await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'enterprise' } })
      await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'gold' } })
      const detail = await settled(sessionId)
      const outputs = (await turns(sessionId)).map((e: { data: { output: unknown } }) => e.data.output)
      t.same(outputs[1].messages.map((m: { text?: { body: string } }) => m.text?.body), ['Please tap one of the buttons.'])
      t.same(outputs[2].functions.map((f: { type: string }) => f.type), ['transfer'])
      t.equal(detail.status, 'completed')
      t.equal(detail.warnings, 2, 'each invalid reply counts as a warning')
      t.equal((await finishedLog(sessionId)).warnings, 2)
    })

    await t.test('50 concurrent sends into one session: one turn each, in arrival order', async (t) => {
      const { call, settled } = await arrange()
      const echo = await call('POST', '/v1/flows', { name: 'Echo', definition: echoForever })
      const { sessionId } = await call('POST', `/v1/sessions/flows/${echo.id}/create`)
      const accepted = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${i}` } })),
      )
      await settled(sessionId)
      const events = (await call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { type: string; data: { messageId: string; message?: { text: { body: string } }; output?: { messages: { text?: { body: string } }[] } } }[]
      const received = events.filter((e) => e.type === 'MessageReceived')
      const answered = events.filter((e) => e.type === 'TurnCompleted').slice(1)
      t.equal(received.length, 50)
      t.same(new Set(received.map((e) => e.data.messageId)), new Set(accepted.map((a: { messageId: string }) => a.messageId)), 'every 202 became a received message')
      t.same(answered.map((e) => e.data.messageId), received.map((e) => e.data.messageId), 'one turn per message, in arrival order')
      t.same(
        answered.map((e) => e.data.output!.messages[0]!.text!.body),
        received.map((e) => `You said ${e.data.message!.text.body}`),
        'each turn answers its own message',
      )
    })

    await t.test('an idle session expires: the log shows timeout and messages are refused', async (t) => {
      const { headers, call, settled, finishedLog, flow } = await arrange()
      // The test sweeps by hand: the engine's own sweeps would expire the sessions first.
      await conversations!.sweeper.stop()
      t.teardown(() => {
        clock = undefined
        conversations!.sweeper.start()
      })
      const echo = await call('POST', '/v1/flows', { name: 'Echo', definition: echoForever })
      const waiting = await call('POST', `/v1/sessions/flows/${echo.id}/create`)
      await settled(waiting.sessionId)
      // Sessions other subtests left idle were all started before these two: expired first, they leave the count to these.
      clock = new Date(Date.parse(waiting.expiresAt) - 1)
      await logsCaughtUp(t)
      await conversations!.sweeper.sweep()
      const { sessionId, expiresAt } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { name: 'Cy' } })
      await settled(sessionId)
      clock = new Date(Date.parse(expiresAt) + 1000)
      await logsCaughtUp(t)
      t.equal(await conversations!.sweeper.sweep(), 2, 'the sweeper expires the idle sessions: this one and the echo session still waiting')
      const log = await finishedLog(sessionId)
      t.equal(log.status, 'timeout')
      t.equal(log.finishedAt, clock.toISOString())
      const response = await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers, payload: { type: 'text', text: { body: 'hello?' } } })
      t.equal(response.statusCode, 409)
      t.equal((await call('GET', `/v1/sessions/${sessionId}`)).status, 'timeout')
    })

    await t.test('replaying every event through a fresh session log gives the same rows', async (t) => {
      const { call, settled, finishedLog, flow } = await arrange()
      const replies: Record<string, object[]> = {
        Ana: [{ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } }],
        Bo: [{ type: 'text', text: { body: 'enterprise' } }, { type: 'text', text: { body: 'gold' } }],
        Cy: [{ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'basic', title: 'Basic' } } }],
        Di: [],
      }
      for (const [name, messages] of Object.entries(replies)) {
        const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { name } })
        for (const message of messages) await call('POST', `/v1/sessions/${sessionId}/message`, message)
        await settled(sessionId)
        if (messages.length > 0) await finishedLog(sessionId)
      }
      const before = await storage.db.selectFrom('session_logs').selectAll().orderBy('id').execute()
      t.ok(before.length >= 4)
      await rebuildProjection(storage, store, sessionLogsProjection)
      t.same(await storage.db.selectFrom('session_logs').selectAll().orderBy('id').execute(), before)
    })
  })
}
