import t from 'tap'
import { verifySession } from '../../src/audit/verify.js'
import { changeWorkspace } from '../../src/commands/tenancy.js'
import { sessionStream } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurnOrCall } from '../../src/engine/interpreter.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// 01:30 UTC on 28 November is 22:30 on the 27th in São Paulo: "amanhã" there is the 28th, in UTC the 29th.
const NOW = new Date('2026-11-28T01:30:00Z')

const askDay = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Which day?' } }, input: { kind: 'date' }, saveAs: 'day' } },
    { id: 'done', type: 'end', position: { x: 400, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'done' },
  ],
}
const askName = structuredClone(askDay)
askName.nodes[1]!.data = { prompt: { type: 'text', text: { body: 'Your name?' } }, input: { kind: 'text' }, saveAs: 'day' }

for (const backend of apiBackends) {
  t.test(`a date question in a workspace in São Paulo, on ${backend.name}`, async (t) => {
    const { app, admin, ctx, store } = await openTestApp(t, backend, { engine: true, now: () => NOW })
    const scope = { workspaceId: admin.workspaceId, organizationId: admin.organizationId }
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload ? { payload } : {}) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    /** Starts a session of the flow, answers `reply` and gives the session's events once the engine has answered. */
    const converse = async (definition: object, reply: string): Promise<{ sessionId: string; events: RecordedEvent[] }> => {
      const flow = await call('POST', '/v1/flows', { name: `Flow ${Math.random()}`, definition })
      const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`)
      await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: reply } })
      await eventually(`the answer of session ${sessionId}`, async () => ((await call('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
      return { sessionId, events: await store.readStream(sessionStream(sessionId)) }
    }
    const turnsOf = (events: RecordedEvent[]) => events.filter((e) => e.type === 'TurnCompleted').map((e) => e.data as { output: { variables: Record<string, unknown> }; timeZone?: string })
    const flows = new FlowVersions(store)
    const verify = (sessionId: string, events: RecordedEvent[]) => verifySession(sessionId, events, (state) => flows.ofSession(state), runTurnOrCall)

    await call('POST', '/v1/variables', { name: 'day', type: 'string' })
    await changeWorkspace(ctx, { ...scope, timezone: 'America/Sao_Paulo' })
    const { sessionId, events } = await converse(askDay, 'amanhã')

    await t.test('"amanhã" is saved as the next day in the workspace’s zone, and the turn records the zone', async (t) => {
      const [started, answered] = turnsOf(events)
      t.same(answered?.output.variables, { day: '2026-11-28' })
      t.equal(answered?.timeZone, 'America/Sao_Paulo')
      t.equal(started?.timeZone, 'America/Sao_Paulo', 'every turn of a flow with a date question records it')
    })

    await t.test('audit verify reproduces the turn from the recorded zone, whatever the workspace’s is now', async (t) => {
      await changeWorkspace(ctx, { ...scope, timezone: null })
      const verdict = await verify(sessionId, events)
      t.equal(verdict.turns, 2)
      t.same(verdict.divergences, [])
    })

    await t.test('a turn recorded with another zone diverges on the saved day', async (t) => {
      const tampered = events.map((e) => (e.type === 'TurnCompleted' ? { ...e, data: { ...(e.data as object), timeZone: 'UTC' } } : e))
      const verdict = await verify(sessionId, tampered)
      t.equal(verdict.divergences.length, 1, 'the start turn reads no date; the answer does')
      t.match(JSON.stringify(verdict.divergences[0]?.differences), /2026-11-29/, 'in UTC it is the 29th')
    })

    await t.test('the turns of a flow without a date question record no zone', async (t) => {
      const plain = await converse(askName, 'Ana')
      t.same(turnsOf(plain.events).map((turn) => turn.timeZone), [undefined, undefined])
      t.same((await verify(plain.sessionId, plain.events)).divergences, [])
    })
  })
}
