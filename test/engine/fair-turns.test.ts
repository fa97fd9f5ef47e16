import { randomUUID } from 'node:crypto'
import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { session, sessionStream } from '../../src/domain/session.js'
import type { Position, RecordedEvent } from '../../src/eventstore/port.js'
import { FairTurns, TURNS_IN_FLIGHT, type SessionTurns } from '../../src/engine/fair-turns.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurn } from '../../src/engine/interpreter.js'
import { EngineWorker } from '../../src/engine/worker.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })
const turnsOf = (sessionId: string, organizationId: string, n: number): SessionTurns => ({
  sessionId,
  organizationId,
  seenThrough: 0n,
  trigger: { id: randomUUID(), type: 'SessionStarted', stream: sessionStream(sessionId), revision: 0n, position: at(n), data: {}, metadata: {}, createdAt: new Date() } as unknown as RecordedEvent,
})

t.test('sessions are taken round the organizations, and the checkpoint moves only past work done', async (t) => {
  const started: string[] = []
  const held = new Map<string, () => void>()
  const handled: bigint[] = []
  // The backlog's sessions finish once every window has been added, as if the database were busy.
  let open!: () => void
  const busy = new Promise<void>((resolve) => (open = resolve))
  const turns = new FairTurns(
    {
      runTurns: async ({ sessionId }) => {
        started.push(sessionId)
        if (sessionId.startsWith('slow')) await new Promise<void>((resolve) => held.set(sessionId, resolve))
        else await busy
      },
      carryOutKanban: async () => {},
      handledThrough: (through) => handled.push(through.commit),
    },
    silentLogger,
  )
  // A window held by one slow session, then a backlog of one organization in another, then one
  // session of a second organization.
  await turns.add(at(1), 1, [turnsOf('slow-a', 'A', 1)], [])
  const backlog = Array.from({ length: 500 }, (_, i) => turnsOf(`a-${i}`, 'A', 2 + i))
  await turns.add(at(600), 500, backlog, [])
  await turns.add(at(601), 1, [turnsOf('b-0', 'B', 601)], [])
  open()
  await eventually('the backlog run', () => (started.length === 502 ? true : undefined))
  // The sessions in flight when B's came, then one more of A (whose turn of the round it was), then B's.
  t.equal(started.indexOf('b-0') + 1, TURNS_IN_FLIGHT + 2, 'B\'s session is taken as soon as a place frees after A\'s turn of the round')
  t.same(handled, [], 'no checkpoint move while the first window waits for its session')
  held.get('slow-a')!()
  await eventually('the checkpoint moved', () => (handled.length > 0 ? true : undefined))
  t.same(handled, [601n], 'then past every window at once')

  // A session that gets new triggers while it runs runs once more afterwards, never twice at once.
  started.length = 0
  await turns.add(at(602), 1, [turnsOf('slow-c', 'C', 602)], [])
  await turns.add(at(603), 1, [turnsOf('slow-c', 'C', 603)], [])
  await turns.add(at(604), 1, [turnsOf('slow-c', 'C', 604)], [])
  t.same(started, ['slow-c'], 'the session runs once at a time')
  held.get('slow-c')!()
  await eventually('the session run again', () => (started.length === 2 ? true : undefined))
  t.same(handled, [601n, 602n], 'the first window is done; the later ones wait for the second run')
  held.get('slow-c')!()
  await eventually('the checkpoint moved', () => (handled.length === 3 ? true : undefined))
  t.same(started, ['slow-c', 'slow-c'], 'the two triggers that came while it ran share one run')
  t.same(handled, [601n, 602n, 604n], 'then past the last window')
  await turns.reset()
})

t.test('a failure that reaches the queue is tried again, and kanban actions go one at a time in log order', async (t) => {
  const tries = new Map<string, number>()
  const carried: string[] = []
  let carrying = 0
  let mostAtOnce = 0
  const handled: bigint[] = []
  const turns = new FairTurns(
    {
      runTurns: async ({ sessionId }) => {
        tries.set(sessionId, (tries.get(sessionId) ?? 0) + 1)
        if (sessionId === 'flaky' && tries.get(sessionId) === 1) throw new Error('the database went away')
      },
      carryOutKanban: async (event) => {
        mostAtOnce = Math.max(mostAtOnce, ++carrying)
        await new Promise((resolve) => setTimeout(resolve, 5))
        carried.push(event.id)
        carrying--
      },
      handledThrough: (through) => handled.push(through.commit),
    },
    silentLogger,
  )
  const kanban = (n: number) => ({ ...turnsOf(`k-${n}`, 'A', n).trigger, id: `turn-${n}` })
  await turns.add(at(1), 3, [turnsOf('flaky', 'A', 1)], [kanban(2), kanban(3)])
  await turns.add(at(4), 1, [turnsOf('steady', 'B', 4)], [kanban(4)])
  await eventually('every window handled', () => (handled.at(-1) === 4n ? true : undefined))
  t.equal(tries.get('flaky'), 2, 'the failed session ran again')
  t.equal(tries.get('steady'), 1, 'the other session once')
  t.same(carried, ['turn-2', 'turn-3', 'turn-4'], 'kanban actions in log order')
  t.equal(mostAtOnce, 1, 'one at a time')
  await turns.reset()
})

/**
 * Sessions of one organization ahead of another's in the log: two of the engine's read batches (200
 * events) and more, so the other's session is read while the backlog waits, and more than the 400
 * places allowed it below, so an engine taking sessions in log order would fail the check.
 */
const BACKLOG = 500

for (const backend of reachableBackends) {
  t.test(`an organization's backlog does not hold another's turn behind it, on ${backend.name}`, async (t) => {
    const { app, admin, ctx, store, storage } = await openTestApp(t, backend, { engine: false })
    const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: null })
    const api = async (apiKey: string, url: string, payload: object) => {
      const response = await app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload })
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    const flowOf = async (apiKey: string) => {
      await api(apiKey, '/v1/variables', { name: 'said', type: 'string' })
      return (await api(apiKey, '/v1/flows', { name: 'Echo', definition: echoFlow })).id as string
    }
    const flowA = await flowOf(admin.apiKey)
    const flowB = await flowOf(other.apiKey)

    // The first organization's backlog: sessions started while no engine ran, appended at once so
    // that they go in a few group commits rather than a thousand transactions.
    const organizationA = (await storage.db.selectFrom('workspaces').select('organization_id').where('id', '=', admin.workspaceId).executeTakeFirstOrThrow()).organization_id
    const scope = { workspaceId: admin.workspaceId, organizationId: organizationA }
    await Promise.all(
      Array.from({ length: BACKLOG }, async () => {
        const sessionId = randomUUID()
        const [started] = session.decide(
          {
            type: 'StartSession',
            data: { sessionId, ...scope, flowId: flowA, flowVersion: 1, variables: {}, externalId: null, apiKeyId: null, callbackUrl: null, ttlSeconds: 600, messageId: randomUUID(), now: new Date().toISOString() },
          },
          session.initialState,
        )
        await store.append(sessionStream(sessionId), [{ id: randomUUID(), type: started!.type, data: started!.data, metadata: { actor: 'test', ...scope } }], { expectedRevision: 'no_stream' })
      }),
    )
    // Then one session of the other organization, last in the log.
    const { sessionId: late } = await api(other.apiKey, `/v1/sessions/flows/${flowB}/create`, {})

    const worker = new EngineWorker(storage.db, store, new FlowVersions(store), runTurn, async () => {}, silentLogger)
    await worker.start()
    t.teardown(() => worker.stop())
    const completed = async () =>
      storage.db.selectFrom('events').select(['stream_id', 'global_position']).where('event_type', '=', 'TurnCompleted').orderBy('global_position').execute()
    const turns = await eventually('every session has its turn', async () => {
      const rows = await completed()
      return rows.length >= BACKLOG + 1 ? rows : undefined
    }, 120_000)
    await worker.stop()

    const order = turns.map((row) => row.stream_id)
    const rank = order.indexOf(sessionStream(late)) + 1
    t.ok(rank > 0 && rank <= 2 * 200, `the other organization's turn is among the first ${2 * 200} (the ${rank}th of ${order.length}), not behind the ${BACKLOG} read before it`)
    t.equal(new Set(order).size, BACKLOG + 1, 'every session has a turn')
    t.equal(order.length, BACKLOG + 1, 'and only one')
  })
}
