import { existsSync } from 'node:fs'
import t from 'tap'
import { DEFAULT_ENGINE_PARTITIONS } from '../../src/config.js'
import { timerTriggerId } from '../../src/domain/session.js'
import { SWEEPER_LEASE, partitionOf } from '../../src/engine/partitions.js'
import { cliPath } from '../helpers/cli.js'
import { pauseFlow } from '../helpers/flows.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { ROLE_START_TIMEOUT_MS, WEBHOOK_ENV, leasesHeld, parseWebhook, partitionsLogged } from '../helpers/role-processes.js'
import { expect } from '../helpers/service-api.js'
import { EXIT_TIMEOUT_MS, postgresStorage, startRole, stopGracefully, until, within, type Service } from '../helpers/service-process.js'
import { postgresUrl } from '../helpers/storage.js'
import { sleep } from '../helpers/wait.js'

// Acceptance: SIGKILL of the engine process that drives a waiting session's partition and holds the
// sweeper's lease, a second before the session's timer is due. The other engine takes both over, and
// the timer fires once: one TimerFired, one turn for it, one webhook at a real HTTPS receiver.

const PARTITIONS = DEFAULT_ENGINE_PARTITIONS
/** Room to create the sessions and see their timers before the kill, on a busy machine. */
const DELAY_SECONDS = 8
/** Before the earliest timer is due: room for a late kill on a busy machine, with the sweep every second. */
const KILL_BEFORE_DUE_MS = 1_000
/** Two engines count each other and take free partitions every second. */
const SPREAD_TIMEOUT_MS = 60_000
const FIRED_TIMEOUT_MS = 30_000
/** After every webhook arrived: the sweeps a timer fired twice would have shown in. */
const SETTLE_MS = 3_000

interface SessionEvent {
  type: string
  data: { messageId: string; firedAt?: string }
}

/** Whether `engines` drive every partition between them, none twice, each some. */
const shareEveryPartition = (engines: Service[]) => {
  const all = engines.flatMap((engine) => partitionsLogged(engine) ?? [])
  return all.length === PARTITIONS && new Set(all).size === PARTITIONS && engines.every((engine) => (partitionsLogged(engine)?.length ?? 0) > 0)
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

const skip = postgresUrl ? false : 'DATABASE_URL is unset: engine processes share partitions and the sweeper through Postgres leases'

t.test('a timer due just after its engine and the sweeper die fires once, from the engine that takes over', { skip }, async (t) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const setup = await postgresStorage.prepare(t, { ...WEBHOOK_ENV, WEBHOOK_CA_FILE: receiver.caFile })
  const logged = { ...setup.env, LOG_LEVEL: 'info' }
  const [api, ...engines] = await Promise.all([
    startRole(t, 'api,projector,dispatcher', setup.env, ROLE_START_TIMEOUT_MS),
    startRole(t, 'engine', logged, ROLE_START_TIMEOUT_MS),
    startRole(t, 'engine', logged, ROLE_START_TIMEOUT_MS),
  ])
  const sweeping = () => engines.filter((engine) => leasesHeld(engine).includes(SWEEPER_LEASE))
  await until(api!, 'two engines to share the partitions, one of them sweeping', SPREAD_TIMEOUT_MS, async () => shareEveryPartition(engines) && sweeping().length === 1)
  const [victim] = sweeping() as [Service]
  const survivor = engines.find((engine) => engine !== victim)!
  const victimPartitions = partitionsLogged(victim)!

  const { apiKey } = await expect(api!, setup.apiKey!, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  const flow = await expect(api!, apiKey, 201, 'POST', '/v1/flows', { name: 'Pause', definition: pauseFlow(DELAY_SECONDS) })
  const create = async (): Promise<string> => (await expect(api!, apiKey, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId
  const sessionIds = await Promise.all([create(), create(), create(), create()])
  // Sessions land in partitions by a hash of their random id: more until one is the victim's.
  while (!sessionIds.some((id) => victimPartitions.includes(partitionOf(id, PARTITIONS)))) sessionIds.push(await create())

  const dueAt = new Map<string, string>()
  await until(api!, 'every session to wait at the delay with its timer', FIRED_TIMEOUT_MS, async () => {
    for (const sessionId of sessionIds) {
      const { timer } = await expect(api!, apiKey, 200, 'GET', `/v1/sessions/${sessionId}`)
      if (timer) dueAt.set(sessionId, timer.dueAt)
    }
    return dueAt.size === sessionIds.length
  })
  const earliest = Math.min(...[...dueAt.values()].map((due) => Date.parse(due)))
  await sleep(earliest - KILL_BEFORE_DUE_MS - Date.now())
  const killedAt = new Date().toISOString()
  victim.child.kill('SIGKILL')
  t.equal((await within(victim.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')).signal, 'SIGKILL', 'the engine driving a waiting session and sweeping was killed before its timer was due')

  const triggerOf = (sessionId: string) => timerTriggerId(sessionId, 'pause', dueAt.get(sessionId)!)
  const webhooksOf = (sessionId: string) => receiver.requests.filter((request) => parseWebhook(request).messageId === triggerOf(sessionId))
  await until(api!, "every timer's webhook", FIRED_TIMEOUT_MS, async () => sessionIds.every((sessionId) => webhooksOf(sessionId).some((request) => request.answered)))
  await sleep(SETTLE_MS)

  t.ok(leasesHeld(survivor).includes(SWEEPER_LEASE), 'the surviving engine took the sweeper over')
  t.same([...partitionsLogged(survivor)!].sort((a, b) => a - b), Array.from({ length: PARTITIONS }, (_, p) => p), "and drives the dead engine's partitions")
  for (const sessionId of sessionIds) {
    const partition = partitionOf(sessionId, PARTITIONS)
    const whose = victimPartitions.includes(partition) ? "the dead engine's" : "the survivor's"
    const events: SessionEvent[] = (await expect(api!, apiKey, 200, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content
    const fired = events.filter((event) => event.type === 'TimerFired')
    t.same(
      fired.map((event) => event.data.messageId),
      [triggerOf(sessionId)],
      `session ${sessionId} (partition ${partition}, ${whose}): one TimerFired, its messageId derived from the timer`,
    )
    t.ok(fired[0] && fired[0].data.firedAt! >= dueAt.get(sessionId)! && fired[0].data.firedAt! > killedAt, `fired when due, after the kill (${fired[0]?.data.firedAt}; due ${dueAt.get(sessionId)}, kill ${killedAt})`)
    t.equal(events.filter((event) => event.type === 'TurnCompleted' && event.data.messageId === triggerOf(sessionId)).length, 1, 'one turn for it')
    const webhooks = webhooksOf(sessionId)
    t.equal(webhooks.length, 1, 'one webhook for it')
    t.match(parseWebhook(webhooks[0]!), { sessionId, changes: [{ field: 'messages', value: { messages: [{ text: { body: 'Time is up' } }] } }] }, "carrying the turn's message")
  }

  for (const [name, proc] of Object.entries({ survivor, api: api! })) {
    t.same(await stopGracefully(proc), { code: 0, signal: null }, `${name} stops cleanly on SIGTERM`)
  }
})
