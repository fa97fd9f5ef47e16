import t from 'tap'
import { sessionStream } from '../../src/domain/session.js'
import type { TurnOutput } from '../../src/domain/turn.js'
import { analyticsSessionsProjection } from '../../src/projections/analytics-sessions.js'
import { rebuildProjection } from '../../src/projections/rebuild.js'
import { openTestApp } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

const SESSIONS = 24

// start → split ab: a ends the session; b asks a question whose answer leads back to ab, which
// draws again. A session answered once has drawn twice, and may count in both branches.
const abTest = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ab', type: 'split', position: { x: 200, y: 0 }, data: { branches: [{ id: 'a', weight: 50 }, { id: 'b', weight: 50 }] } },
    { id: 'done', type: 'end', position: { x: 400, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 400, y: 120 }, data: { prompt: { type: 'text', text: { body: 'Your name?' } }, input: { kind: 'text' } } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ab' },
    { id: 'e2', source: 'ab', sourceHandle: 'a', target: 'done' },
    { id: 'e3', source: 'ab', sourceHandle: 'b', target: 'ask' },
    { id: 'e4', source: 'ask', sourceHandle: 'default', target: 'ab' },
  ],
}

type Turn = { output: TurnOutput }

for (const backend of reachableBackends) {
  t.test(`GET /v1/flows/{id}/analytics counts the sessions and completions of each split branch (${backend.name})`, async (t) => {
    const test = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await test.app.inject({ method, url, headers: { 'x-api-key': test.admin.apiKey }, ...(payload && { payload }) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    const turnsOf = async (sessionId: string) => (await test.store.readStream(sessionStream(sessionId))).filter((e) => e.type === 'TurnCompleted').map((e) => e.data as Turn)
    const answeredTurns = (sessionId: string, count: number) => eventually(`turn ${count} of ${sessionId}`, async () => ((await turnsOf(sessionId)).length >= count ? true : undefined))

    const flow = await call('POST', '/v1/flows', { name: 'A/B', definition: abTest })
    const sessionIds: string[] = await Promise.all(Array.from({ length: SESSIONS }, async () => (await call('POST', `/v1/sessions/flows/${flow.id}/create`, {})).sessionId))
    for (const id of sessionIds) await answeredTurns(id, 1)
    // Every session waiting at the question (branch b) answers it once, and draws again.
    for (const id of sessionIds) {
      if ((await turnsOf(id))[0]?.output.status !== 'active') continue
      await call('POST', `/v1/sessions/${id}/message`, { type: 'text', text: { body: 'Ana' } })
      await answeredTurns(id, 2)
    }

    // What the analytics must say, from the recorded turns: a session counts in every branch it drew.
    const expected = { a: { sessions: 0, completed: 0 }, b: { sessions: 0, completed: 0 } }
    let drawnTwice = 0
    for (const id of sessionIds) {
      const turns = await turnsOf(id)
      const drawn = new Set(turns.flatMap((turn) => turn.output.choices ?? []).map((choice) => choice.branchId as 'a' | 'b'))
      const completed = turns.at(-1)?.output.status === 'completed'
      if (turns.length > 1) drawnTwice++
      for (const branch of drawn) {
        expected[branch].sessions++
        if (completed) expected[branch].completed++
      }
    }
    const branches = [
      { nodeId: 'ab', branchId: 'a', ...expected.a },
      { nodeId: 'ab', branchId: 'b', ...expected.b },
    ]
    t.ok(expected.a.sessions > 0 && expected.b.sessions > 0 && drawnTwice > 0, `both branches drawn (a ${expected.a.sessions}, b ${expected.b.sessions}), ${drawnTwice} sessions twice`)

    const analytics = () => call('GET', `/v1/flows/${flow.id}/analytics`)
    const answer = await eventually('the analytics of every turn', async () => {
      const now = await analytics()
      return now.nodes.find((node: { nodeId: string }) => node.nodeId === 'ab')?.reached === SESSIONS && JSON.stringify(now.branches) === JSON.stringify(branches) ? now : undefined
    })
    t.same(answer.branches, branches, 'each branch: the sessions that drew it, and of those the completed ones')
    t.equal(answer.sessions.total, SESSIONS)

    await rebuildProjection(test.storage, test.store, analyticsSessionsProjection)
    t.same((await analytics()).branches, branches, 'a rebuild counts the same')
  })
}
