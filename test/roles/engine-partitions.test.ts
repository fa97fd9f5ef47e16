import { existsSync } from 'node:fs'
import t from 'tap'
import { ENGINE_LEASE_APPLICATION_NAME, PartitionLeases, SWEEPER_LEASE, fairShare } from '../../src/engine/partitions.js'
import { DEFAULT_ENGINE_PARTITIONS } from '../../src/config.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { silentLogger } from '../helpers/app.js'
import { eventually } from '../helpers/wait.js'
import { cliPath } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { EXIT_TIMEOUT_MS, logEntries, postgresStorage, startRole, stopGracefully, until, within, type Service } from '../helpers/service-process.js'
import { expect } from '../helpers/service-api.js'
import { partitionsLogged } from '../helpers/role-processes.js'
import { createTestDatabase, postgresUrl } from '../helpers/storage.js'

// Partition leases of engines in one test process, each with a lease connection of its own as
// each process would have; then engine processes sharing the partitions of the sessions against one fresh Postgres database:
// three split them, none held twice; one is SIGKILLed and the others take its partitions; a fourth
// joins and they are spread again. Messages sent all along get exactly one turn each, in order.

const PARTITIONS = DEFAULT_ENGINE_PARTITIONS
const SESSIONS = 6
/** Several processes start side by side, on a machine that may be busy. */
const ROLE_START_TIMEOUT_MS = 120_000
/** Engines count each other and ask for free partitions every second; a killed one's session ends at once. */
const REBALANCE_TIMEOUT_MS = 60_000
const TURNS_TIMEOUT_MS = 90_000

/** Why `engines` do not share every partition with at most `share` each and none held twice; undefined when they do. */
function unevenSpread(engines: Service[], share: number): string | undefined {
  const sets = engines.map(partitionsLogged)
  const all = sets.flatMap((set) => set ?? [])
  const spread = sets.every((set) => set !== undefined && set.length <= share) && all.length === PARTITIONS && new Set(all).size === PARTITIONS
  return spread ? undefined : assertionMessage(sets)
}

/** The engines among `engines` that have taken the sweeper's lease (nothing here makes one lose it). */
const sweepers = (engines: Service[]) => engines.filter((engine) => logEntries<{ lease?: string }>(engine, 'lease taken; active').some((entry) => entry.lease === SWEEPER_LEASE))

/** Waits until `engines` hold every partition between them, at most `share` each, none twice. */
async function spreadOver(engines: Service[], share: number, what: string): Promise<void> {
  let last: string | undefined
  await until(engines[0]!, what, REBALANCE_TIMEOUT_MS, async () => {
    last = unevenSpread(engines, share)
    return last === undefined
  }).catch((error: unknown) => {
    throw new Error(`${assertionMessage(error, { maxLength: 300 })}; partitions held last: ${last}`)
  })
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

const skip = postgresUrl ? false : 'DATABASE_URL is unset: engine processes share partitions through Postgres leases'

t.test('engine processes share the partitions of the sessions, take over a dead one’s and make room for a new one', { skip }, async (t) => {
  const setup = await postgresStorage.prepare(t)
  const admin = setup.apiKey!
  const logged = { ...setup.env, LOG_LEVEL: 'info' }
  const startEngine = () => startRole(t, 'engine', logged, ROLE_START_TIMEOUT_MS)
  const [api, ...engines] = await Promise.all([startRole(t, 'api,projector', setup.env, ROLE_START_TIMEOUT_MS), startEngine(), startEngine(), startEngine()])

  await spreadOver(engines, fairShare(PARTITIONS, 3), 'three engines to share every partition')
  t.pass(`three engines hold the ${PARTITIONS} partitions between them, at most ${fairShare(PARTITIONS, 3)} each, none twice`)
  await until(api, 'an engine to take the sweeper lease', REBALANCE_TIMEOUT_MS, async () => sweepers(engines).length > 0)
  t.equal(sweepers(engines).length, 1, 'one of them sweeps')
  // The sweeping engine is the one killed, so that both its partitions and the sweeper move.
  const [victim] = sweepers(engines)
  const [a, b] = engines.filter((engine) => engine !== victim) as [Service, Service]

  await expect(api, admin, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await expect(api, admin, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  const sessionIds: string[] = await Promise.all(Array.from({ length: SESSIONS }, async () => (await expect(api, admin, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string))
  const sent = new Map<string, string[]>(sessionIds.map((id) => [id, []]))
  /** One more message into every session, each session's in order. */
  const sendRound = (round: string) =>
    Promise.all(
      sessionIds.map(async (sessionId) => {
        const { messageId } = await expect(api, admin, 202, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: round } })
        sent.get(sessionId)!.push(messageId as string)
      }),
    )

  await sendRound('before the kill')
  victim!.child.kill('SIGKILL')
  // Sent while the survivors take the dead engine's partitions over.
  const duringTakeover = sendRound('during the takeover')
  t.equal((await within(victim!.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')).signal, 'SIGKILL', 'the sweeping engine was killed')
  await spreadOver([a, b], fairShare(PARTITIONS, 2), 'the two survivors to hold every partition')
  t.pass(`the survivors hold every partition between them, at most ${fairShare(PARTITIONS, 2)} each`)
  await until(a, 'a survivor to sweep', REBALANCE_TIMEOUT_MS, async () => sweepers([a, b]).length > 0)
  t.equal(sweepers([a, b]).length, 1, 'one survivor took the sweeper over')
  await duringTakeover

  const d = await startEngine()
  const duringJoin = sendRound('while an engine joins')
  await spreadOver([a, b, d], fairShare(PARTITIONS, 3), 'the partitions to be spread again over three engines')
  t.pass(`with a new engine the partitions are spread again, at most ${fairShare(PARTITIONS, 3)} each`)
  await duringJoin
  t.same(sweepers([d]), [], 'the new engine stands by for the sweeper lease')
  await sendRound('after the join')

  const startTurnOf = async (sessionId: string) => (await sessionEvents(sessionId)).find((e) => e.type === 'SessionStarted')!.data.messageId
  const sessionEvents = async (sessionId: string): Promise<{ type: string; data: { messageId: string } }[]> =>
    (await expect(api, admin, 200, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content
  const turnsOf = async (sessionId: string) => (await sessionEvents(sessionId)).filter((e) => e.type === 'TurnCompleted').map((e) => e.data.messageId)
  for (const sessionId of sessionIds) {
    const expected = [await startTurnOf(sessionId), ...sent.get(sessionId)!]
    await until(api, `the ${expected.length} turns of session ${sessionId}`, TURNS_TIMEOUT_MS, async () => (await turnsOf(sessionId)).length >= expected.length)
    t.same(await turnsOf(sessionId), expected, `session ${sessionId}: exactly one turn per message, in order, whichever engine ran it`)
  }

  for (const [role, proc] of Object.entries({ a, b, d, api })) {
    t.same(await stopGracefully(proc), { code: 0, signal: null }, `${role} stops cleanly on SIGTERM`)
  }
})

t.test('partition leases: a process hands a partition back only once it stopped driving it', { skip }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const count = 4
  const driving = new Map<string, number[]>()
  const overlaps: string[] = []
  const engine = (name: string) => {
    let alive = true
    const leases = new AdvisoryLeases(database.url, silentLogger, ENGINE_LEASE_APPLICATION_NAME)
    const partitions = new PartitionLeases(
      leases,
      count,
      async (held) => {
        if (!alive) return
        for (const [other, theirs] of driving) if (other !== name && theirs.some((p) => held.includes(p))) overlaps.push(`${name} drives ${held.join()} while ${other} drives ${theirs.join()}`)
        driving.set(name, held)
      },
      silentLogger,
      50,
    )
    const stop = new AbortController()
    const running = partitions.run(stop.signal)
    const halt = async () => {
      stop.abort()
      await running
      await leases.close()
    }
    t.teardown(halt)
    /** As when its process is killed: it drives nothing any more, and its database session ends. */
    const kill = async () => {
      alive = false
      driving.delete(name)
      await leases.close()
    }
    return { kill }
  }
  const spread = (names: string[], share: number) => () => {
    const sets = names.map((name) => driving.get(name) ?? [])
    const all = sets.flat()
    return sets.every((set) => set.length <= share) && new Set(all).size === count && all.length === count ? true : undefined
  }

  engine('a')
  await eventually('a alone to drive every partition', spread(['a'], count))
  const b = engine('b')
  await eventually('a and b to share them', spread(['a', 'b'], fairShare(count, 2)))
  t.pass('a joining engine gets a share: the first hands partitions back')
  await b.kill()
  await eventually('a to drive every partition again', spread(['a'], count))
  t.pass("the survivor takes a dead engine's partitions")
  t.same(overlaps, [], 'no partition was driven by two engines at once')
})
