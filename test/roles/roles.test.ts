import { existsSync } from 'node:fs'
import t from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { cliPath, runCli, tempDir } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js'
import { ROLE_START_TIMEOUT_MS, WEBHOOK_ENV, leasesLogged, parseWebhook, sessionEvents } from '../helpers/role-processes.js'
import { EXIT_TIMEOUT_MS, postgresStorage, running, startRole, stopGracefully, until, within, type Service } from '../helpers/service-process.js'
import { expect } from '../helpers/service-api.js'
import { postgresUrl } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Acceptance for `flowd start --role`: api, engine, two dispatchers and two projectors (one active,
// one standing by) as separate processes against one fresh Postgres database. Every turn's webhook
// arrives once and in per-session order; killing the active projector, the standby takes over.

const SESSIONS = 5
const MESSAGES = 4
const DELIVERY_TIMEOUT_MS = 90_000
/** A standby asks for its leases every second; the killed holder's session ends at once. */
const TAKEOVER_TIMEOUT_MS = 30_000

const projectionLeases = allProjections.map((p) => `projection:${p.name}`).sort()

const loggedEvery = (proc: Service, message: string) => async () => projectionLeases.every((lease) => leasesLogged(proc, message).includes(lease))

/** Waits (bounded) until every id of `expected` arrived at the receiver; fails early if `api` dies. */
async function allArrived(api: Service, receiver: HttpsReceiver, expected: string[], what: string, timeoutMs: number): Promise<void> {
  await until(api, what, timeoutMs, async () => {
    const arrived = new Set(receiver.requests.map((r) => parseWebhook(r).messageId))
    return expected.every((id) => arrived.has(id))
  })
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

t.test('flowd start --role: usage', async (t) => {
  const help = await runCli(['start', '--help'], {})
  t.equal(help.code, 0, '--help exits 0')
  for (const role of ['all', 'api', 'projector', 'engine', 'dispatcher']) t.match(help.stdout, new RegExp(`^  ${role} `, 'm'), `--help describes the ${role} role`)

  const unknown = await runCli(['start', '--role', 'api,worker'], { DATA_DIR: tempDir(t) })
  t.equal(unknown.code, 2, 'an unknown role is a usage error (exit 2)')
  t.match(unknown.stderr, /unknown role 'worker'/, 'naming the role')

  const embedded = await runCli(['start', '--role', 'api'], { DATA_DIR: tempDir(t) })
  t.equal(embedded.code, 2, 'a single role on the embedded database is a usage error (exit 2)')
  t.match(embedded.stderr, /needs DATABASE_URL/, 'saying that it needs DATABASE_URL')
})

const skip = postgresUrl ? false : 'DATABASE_URL is unset: roles other than all run as processes sharing a Postgres database'

t.test('api, projector, engine and dispatcher as separate processes against one Postgres', { skip }, async (t) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const setup = await postgresStorage.prepare(t, { ...WEBHOOK_ENV, WEBHOOK_CA_FILE: receiver.caFile })
  const admin = setup.apiKey!
  const logged = { ...setup.env, LOG_LEVEL: 'info' }

  const activeProjector = await startRole(t, 'projector', logged, ROLE_START_TIMEOUT_MS)
  await until(activeProjector, 'the first projector to take every projection lease', ROLE_START_TIMEOUT_MS, loggedEvery(activeProjector, 'lease taken; active'))
  const [standbyProjector, engine, api, dispatcherA, dispatcherB] = await Promise.all([
    startRole(t, 'projector', logged, ROLE_START_TIMEOUT_MS),
    startRole(t, 'engine', setup.env, ROLE_START_TIMEOUT_MS),
    startRole(t, 'api', setup.env, ROLE_START_TIMEOUT_MS),
    startRole(t, 'dispatcher', setup.env, ROLE_START_TIMEOUT_MS),
    startRole(t, 'dispatcher', setup.env, ROLE_START_TIMEOUT_MS),
  ])
  await until(standbyProjector, 'the second projector to stand by on every projection', ROLE_START_TIMEOUT_MS, loggedEvery(standbyProjector, 'another process holds the lease; standing by'))

  const notFound = await fetch(`${engine.base}/v1/workspaces`, { headers: { 'x-api-key': admin } })
  t.equal(notFound.status, 404, 'a process without the api role serves no API')
  t.equal((await fetch(`${engine.base}/readyz`)).status, 200, 'but answers /readyz: ready once the read models, applied elsewhere, are caught up')

  // Everything through the api process: each write waits for read models another process applies.
  const { apiKey } = await expect(api, admin, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  await expect(api, apiKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await expect(api, apiKey, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  const sessionIds: string[] = await Promise.all(
    Array.from({ length: SESSIONS }, async () => (await expect(api, apiKey, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string),
  )
  const sent = new Map<string, string[]>()
  await Promise.all(
    sessionIds.map(async (sessionId) => {
      const ids: string[] = []
      for (let i = 1; i <= MESSAGES; i++) {
        ids.push((await expect(api, apiKey, 202, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${i}` } })).messageId)
      }
      sent.set(sessionId, ids)
    }),
  )
  const startTurn = new Map<string, string>()
  for (const sessionId of sessionIds) {
    startTurn.set(sessionId, (await sessionEvents(api, apiKey, sessionId)).find((e) => e.type === 'SessionStarted')!.data.messageId)
  }
  const expectedOf = (sessionId: string) => [startTurn.get(sessionId)!, ...sent.get(sessionId)!]
  const expected = sessionIds.flatMap(expectedOf)
  await allArrived(api, receiver, expected, `all ${expected.length} turns at the receiver`, DELIVERY_TIMEOUT_MS)
  // A repeat (a bug) still on its way is caught by the same check at the end, once every process
  // has exited and the receiver has read all they sent.
  const webhooksOf = (sessionId: string) => receiver.requests.map(parseWebhook).filter((w) => w.sessionId === sessionId).map((w) => w.messageId)
  for (const sessionId of sessionIds) {
    t.same(webhooksOf(sessionId), expectedOf(sessionId), `session ${sessionId}: one webhook per turn, in send order, with two dispatchers sharing the work`)
    const events = await sessionEvents(api, apiKey, sessionId)
    const turns = events.filter((e) => e.type === 'TurnCompleted').map((e) => e.data.messageId)
    t.same(turns, expectedOf(sessionId), `session ${sessionId}: exactly one turn per message, in order, from the engine process`)
  }
  t.same(leasesLogged(standbyProjector, 'lease taken; active'), [], 'the standby projector applied nothing while the active one lived')
  t.ok([dispatcherA, dispatcherB, engine].every(running), 'every process still runs')

  // The active projector dies: its database session ends, its leases are free, the standby takes them.
  activeProjector.child.kill('SIGKILL')
  t.equal((await within(activeProjector.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')).signal, 'SIGKILL', 'the active projector was killed')
  const later = await expect(api, apiKey, 201, 'POST', '/v1/flows', { name: 'Written after the projector died' })
  await until(api, 'the new flow in the list', TAKEOVER_TIMEOUT_MS, async () => {
    const page = await expect(api, apiKey, 200, 'GET', '/v1/flows?size=100')
    return (page.content as { id: string }[]).some((f) => f.id === later.id)
  })
  t.pass('a write after the kill becomes visible in a list: the standby applies the read models')
  // The standby takes the freed leases one retry at a time: the flows read model may come first.
  await until(standbyProjector, 'the standby to take every projection lease', TAKEOVER_TIMEOUT_MS, loggedEvery(standbyProjector, 'lease taken; active'))
  t.pass('the standby took every projection lease')

  const [first] = sessionIds
  const { messageId } = await expect(api, apiKey, 202, 'POST', `/v1/sessions/${first}/message`, { type: 'text', text: { body: 'after' } })
  await allArrived(api, receiver, [messageId], 'the turn of a message sent after the takeover', DELIVERY_TIMEOUT_MS)
  t.same(webhooksOf(first!), [...expectedOf(first!), messageId], 'its webhook follows the earlier ones (the outbox projection moved to the standby)')

  for (const [role, proc] of Object.entries({ api, engine, dispatcherA, dispatcherB, standbyProjector })) {
    t.same(await stopGracefully(proc), { code: 0, signal: null }, `${role} stops cleanly on SIGTERM`, { output: proc.output() })
  }
  await eventually('the receiver to have read everything the dispatchers sent', async () => ((await receiver.openConnections()) === 0 ? true : undefined), EXIT_TIMEOUT_MS)
  for (const sessionId of sessionIds) {
    const extra = sessionId === first ? [messageId] : []
    t.same(webhooksOf(sessionId), [...expectedOf(sessionId), ...extra], `session ${sessionId}: still one webhook per turn once every process has exited`)
  }
})
