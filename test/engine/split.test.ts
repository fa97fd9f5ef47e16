import t from 'tap'
import { verifySession } from '../../src/audit/verify.js'
import { session, sessionStream, type SessionEvent } from '../../src/domain/session.js'
import type { TurnOutput } from '../../src/domain/turn.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurnOrCall } from '../../src/engine/interpreter.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import { playTurn } from '../../src/engine/worker.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

const SESSIONS = 1000
const WEIGHTS = { a: 20, b: 30, c: 50 } as const
type BranchId = keyof typeof WEIGHTS
const BRANCH_IDS = Object.keys(WEIGHTS) as BranchId[]
const TEXT: Record<BranchId, string> = { a: 'Offer A', b: 'Offer B', c: 'Offer C' }

// start → split ab (a 20, b 30, c 50) → a message per branch, whose unconnected exit completes the session.
const abTest = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ab', type: 'split', position: { x: 200, y: 0 }, data: { branches: BRANCH_IDS.map((id) => ({ id, weight: WEIGHTS[id] })) } },
    ...BRANCH_IDS.map((id, i) => ({ id, type: 'message', position: { x: 400, y: i * 120 }, data: { messages: [{ type: 'text', text: { body: TEXT[id] } }] } })),
  ],
  edges: [{ id: 'e0', source: 'start', target: 'ab' }, ...BRANCH_IDS.map((id) => ({ id: `e-${id}`, source: 'ab', sourceHandle: id, target: id }))],
}

type Turn = { output: TurnOutput }
const startTurnOf = (events: readonly RecordedEvent[]): Turn | undefined => events.find((e) => e.type === 'TurnCompleted')?.data as Turn | undefined

for (const backend of apiBackends) {
  t.test(`a split over ${SESSIONS} preview sessions, on ${backend.name}`, async (t) => {
    const { app, admin, store } = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'POST', url: string, payload: object) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, payload })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    const flow = await call('POST', '/v1/flows', { name: 'A/B', definition: abTest })
    const sessionIds: string[] = []
    for (let i = 0; i < SESSIONS; i += 50) {
      const batch = Array.from({ length: Math.min(50, SESSIONS - i) }, () => call('POST', `/v1/flows/${flow.id}/preview-sessions`, {}))
      sessionIds.push(...(await Promise.all(batch)).map((created: { sessionId: string }) => created.sessionId))
    }
    const events = new Map<string, RecordedEvent[]>()
    await eventually(
      `the start turns of ${SESSIONS} preview sessions`,
      async () => {
        const waiting = sessionIds.filter((id) => !events.has(id))
        for (const id of waiting) {
          const stream = await store.readStream(sessionStream(id))
          if (startTurnOf(stream)) events.set(id, stream)
        }
        return events.size === SESSIONS ? true : undefined
      },
      120_000,
    )

    await t.test('each branch takes a share near its weight', async (t) => {
      const drawn = new Map<string, number>()
      const unlike: string[] = []
      for (const [id, stream] of events) {
        const { output } = startTurnOf(stream)!
        const branchId = output.choices?.length === 1 ? output.choices[0]!.branchId : JSON.stringify(output.choices)
        drawn.set(branchId, (drawn.get(branchId) ?? 0) + 1)
        if (output.visited[2] !== branchId || output.messages[0]?.nodeId !== branchId) unlike.push(`${id}: left by ${output.visited[2]}, recorded ${branchId}`)
      }
      t.same(unlike, [], 'each turn records the one branch it left by')
      t.same([...drawn.keys()].sort(), BRANCH_IDS, 'every draw is a branch of the node, and each was drawn')
      const total = Object.values(WEIGHTS).reduce((sum, weight) => sum + weight, 0)
      for (const id of BRANCH_IDS) {
        // A branch's count is binomial: n·p on average, with standard deviation σ = √(n·p·(1−p)). A
        // correct draw lands beyond 5σ either way about 6 times in 10 million per branch.
        const p = WEIGHTS[id] / total
        const expected = SESSIONS * p
        const sigma = Math.sqrt(SESSIONS * p * (1 - p))
        const count = drawn.get(id) ?? 0
        t.ok(Math.abs(count - expected) <= 5 * sigma, `branch ${id} (weight ${WEIGHTS[id]}): ${count} of ${SESSIONS}, expected ${expected} ± ${(5 * sigma).toFixed(1)}`)
      }
    })

    const flows = new FlowVersions(store)
    const verify = (sessionId: string, recorded: RecordedEvent[]) => verifySession(sessionId, recorded, (state) => flows.ofSession(state), runTurnOrCall)

    await t.test('audit verify replays every session to the same branch', async (t) => {
      let turns = 0
      const divergent: string[] = []
      for (const [id, stream] of events) {
        const verdict = await verify(id, stream)
        turns += verdict.turns
        if (verdict.divergences.length > 0) divergent.push(id)
      }
      t.equal(turns, SESSIONS, 'one turn each')
      t.same(divergent, [], 'no session diverges')
    })

    await t.test('a turn played again without its record draws the same branch: the draw derives from the session and the trigger', async (t) => {
      // So a turn that runs again from its start (after a conflict, or once a call it waited for is
      // answered) takes the branch it drew the first time.
      const redrawn: string[] = []
      for (const [id, stream] of events) {
        const at = stream.findIndex((e) => e.type === 'TurnCompleted')
        const before = stream.slice(0, at).reduce((state, e) => session.evolve(state, { type: e.type, data: e.data } as SessionEvent), session.initialState)
        if (before.status === 'none' || !before.pending[0]) return t.fail(`session ${id} has no pending start`)
        const recorded = stream[at]!.data as Turn & { completedAt: string }
        const played = playTurn(runTurnOrCall, await flows.ofSession(before), before, before.pending[0], new Date(recorded.completedAt))
        if (played.status === 'calling' || JSON.stringify(played.choices) !== JSON.stringify(recorded.output.choices)) redrawn.push(id)
      }
      t.same(redrawn, [], 'every session draws its recorded branch again')
    })

    const [sessionId, stream] = [...events].find(([, recorded]) => startTurnOf(recorded)?.output.choices?.[0]?.branchId === 'a')!
    const retold = (change: (output: TurnOutput) => TurnOutput) =>
      stream.map((e) => (e.type === 'TurnCompleted' ? { ...e, data: { ...(e.data as Turn), output: change((e.data as Turn).output) } } : e))

    await t.test('a turn whose recorded branch was changed diverges on the path and the message', async (t) => {
      const verdict = await verify(sessionId, retold((output) => ({ ...output, choices: [{ nodeId: 'ab', branchId: 'c' }] })))
      t.equal(verdict.divergences.length, 1)
      const differences = JSON.stringify(verdict.divergences[0]?.differences)
      t.match(differences, /visited/, 'the replay took the recorded branch c, the record says the session went to a')
      t.match(differences, /Offer C/)
    })

    await t.test('replay takes the recorded branch rather than drawing again', async (t) => {
      const verdict = await verify(
        sessionId,
        retold((output) => ({
          ...output,
          choices: [{ nodeId: 'ab', branchId: 'c' }],
          visited: ['start', 'ab', 'c'],
          messages: [{ type: 'text', text: { body: TEXT.c }, nodeId: 'c' }],
        })),
      )
      t.same(verdict.divergences, [], 'a turn recorded as branch c throughout replays as c, though its draw gave a')
    })
  })
}
