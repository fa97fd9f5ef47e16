import t from 'tap'
import { engineCheckpoint } from '../../src/engine/partitions.js'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurn } from '../../src/engine/interpreter.js'
import { ENGINE_PROCESSOR, EngineWorker } from '../../src/engine/worker.js'
import { WrongExpectedVersionError, comparePositions, type EventStore } from '../../src/eventstore/port.js'
import { Metrics } from '../../src/metrics/registry.js'
import { listParked } from '../../src/processors/parked-streams.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

/** The most appends in a row of one turn the engine ever lost to other writers before giving it up. */
const MORE_THAN_ANY_RETRY_LIMIT = 40

/**
 * `store` beside another writer of `stream` that, while `competitor.on`, comes first to every
 * append there: each is refused as the store refuses a stale revision, and counted.
 */
function losingAppendsTo(store: EventStore, stream: string): { store: EventStore; competitor: { on: boolean; conflicts: number } } {
  const competitor = { on: false, conflicts: 0 }
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'append') {
        return (...[to, events, options]: Parameters<EventStore['append']>) => {
          if (!competitor.on || to !== stream) return target.append(to, events, options)
          competitor.conflicts++
          return Promise.reject(new WrongExpectedVersionError(to, options.expectedRevision, 'unknown'))
        }
      }
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { store: proxy, competitor }
}

type Turn = Extract<SessionEvent, { type: 'TurnCompleted' }>

for (const backend of reachableBackends) {
  t.test(`a message whose turn keeps conflicting gets it once the conflicts stop, on ${backend.name}`, async (t) => {
    const { app, admin, store, storage } = await openTestApp(t, backend, { engine: false })
    const api = async (url: string, payload: object) => {
      const response = await app.inject({ method: 'POST', url, headers: { 'x-api-key': admin.apiKey }, payload })
      if (response.statusCode >= 300) throw new Error(`${url} answered ${response.statusCode}`)
      return response.json()
    }
    await api('/v1/variables', { name: 'said', type: 'string' })
    const flow = await api('/v1/flows', { name: 'Echo', definition: echoFlow })
    const start = async (): Promise<string> => (await api(`/v1/sessions/flows/${flow.id}/create`, {})).sessionId
    const say = async (sessionId: string, body: string): Promise<string> => (await api(`/v1/sessions/${sessionId}/message`, { type: 'text', text: { body } })).messageId
    const [contested, other] = [await start(), await start()]
    const turnsOf = async (sessionId: string) => (await store.readStream(sessionStream(sessionId))).filter((e) => e.type === 'TurnCompleted') as unknown as Turn[]
    const turnsFor = async (sessionId: string, messageId: string) => (await turnsOf(sessionId)).filter((turn) => turn.data.messageId === messageId).length

    const { store: contestedStore, competitor } = losingAppendsTo(store, sessionStream(contested))
    const metrics = new Metrics(silentLogger, { processMetrics: false })
    const retryingConflicts = async () => (await metrics.sessionsRetryingConflicts.get()).values[0]?.value
    const startEngine = async () => {
      const worker = new EngineWorker(storage.db, contestedStore, new FlowVersions(store), runTurn, async () => {}, silentLogger, undefined, metrics, 100)
      await worker.start()
      return worker
    }
    let worker = await startEngine()
    t.teardown(() => worker.stop())
    await eventually('the start turns', async () => ((await turnsOf(contested)).length === 1 && (await turnsOf(other)).length === 1) || undefined)

    competitor.on = true
    const held = await say(contested, 'held')
    await eventually('the held turn to lose more appends than any retry limit', () => competitor.conflicts > MORE_THAN_ANY_RETRY_LIMIT || undefined)
    const [parked] = await listParked(storage.db, ENGINE_PROCESSOR)
    t.equal(parked?.stream, sessionStream(contested), 'the contested session shows among the parked streams')
    t.match(parked?.reason, /^TurnKeepsConflictingError:/, 'with conflicts as its reason')
    t.equal(await retryingConflicts(), 1, 'and in the metric of sessions retried for conflicts')

    const meanwhile = await say(other, 'meanwhile')
    await eventually('the other session’s turn', async () => (await turnsFor(other, meanwhile)) === 1 || undefined)
    t.equal(await turnsFor(contested, held), 0, 'the other session gets its turn while the contested one still waits')

    await worker.stop()
    const heldEvent = (await store.readStream(sessionStream(contested))).find((event) => event.type === 'MessageReceived' && (event.data as { messageId?: string }).messageId === held)
    const checkpoint = await engineCheckpoint(storage.db)
    t.ok(heldEvent && comparePositions(checkpoint, heldEvent.position) > 0, 'the stopped engine’s checkpoint is past the held message')
    const conflictsBeforeRestart = competitor.conflicts
    worker = await startEngine()
    await eventually('the restarted engine to try the held turn', () => competitor.conflicts > conflictsBeforeRestart || undefined)

    const eventsBefore = (await store.readStream(sessionStream(contested))).length
    competitor.on = false
    await eventually('the held message’s turn', async () => (await turnsFor(contested, held)) > 0 || undefined)
    const appended = (await store.readStream(sessionStream(contested))).slice(eventsBefore)
    t.same(
      appended.map((event) => [event.type, (event.data as { messageId?: string }).messageId === held]),
      [['TurnCompleted', true]],
      'once the conflicts stop, the held message gets exactly one turn, with no new event to wake the engine',
    )
    await eventually('the session to be unparked', async () => ((await listParked(storage.db)).length === 0 && (await retryingConflicts()) === 0) || undefined)
    t.pass('its stream is unparked and the metric back to none')
  })
}
