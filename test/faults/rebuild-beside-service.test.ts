import t from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { openStorage, type DatabaseTarget } from '../../src/store/connect.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { REBUILD_POOLS, runCli } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { call, expect } from '../helpers/service-api.js'
import { postgresStorage, startService, stopGracefully, type Service } from '../helpers/service-process.js'
import { postgresUrl } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Acceptance: `flowd projections rebuild` of every read model beside a running service on Postgres,
// with clients reading and writing all along, answers every request with a 2xx; afterwards the read
// models are those a replay of the whole log makes. The deliveries purged before it are not made
// again, and the receiver gets no webhook twice.

const LOOPS = 4
/** Traffic goes on this long after the rebuild ends, so reads and writes meet the swapped tables. */
const AFTER_REBUILD_MS = 1_500

/** One client's round: the writes whose answers a client lists at once, then the reads. */
async function round(service: Service, apiKey: string, n: number): Promise<string[]> {
  const failures: string[] = []
  const check = async (what: string, status: number, request: Promise<{ status: number; text: string }>) => {
    const reply = await request.catch((error: unknown) => ({ status: 0, text: String(error) }))
    // JSON-escaped: a body never reaches tap's message unquoted.
    if (reply.status !== status) failures.push(`${what}: ${reply.status} ${JSON.stringify(reply.text.slice(0, 200))}`)
    return reply as { status: number; text: string; body?: any }
  }
  const flow = await check('create flow', 201, call(service, apiKey, 'POST', '/v1/flows', { name: `Flow ${n}`, definition: echoFlow }))
  const flowId = flow.body?.id as string | undefined
  if (!flowId) return failures
  await check('get flow', 200, call(service, apiKey, 'GET', `/v1/flows/${flowId}`))
  const session = await check('create session', 201, call(service, apiKey, 'POST', `/v1/sessions/flows/${flowId}/create`))
  const sessionId = session.body?.sessionId as string | undefined
  if (sessionId) await check('send', 202, call(service, apiKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `hello ${n}` } }))
  await check('session logs', 200, call(service, apiKey, 'GET', '/v1/sessions/logs?size=5'))
  if (sessionId) await check('get session', 200, call(service, apiKey, 'GET', `/v1/sessions/${sessionId}`))
  await check('list flows', 200, call(service, apiKey, 'GET', '/v1/flows?size=5'))
  await check('list workspaces', 200, call(service, apiKey, 'GET', '/v1/workspaces'))
  return failures
}

/** The webhook-ids the receiver got more than once. */
const receivedTwice = (receiver: HttpsReceiver) => {
  const ids = receiver.requests.map((request) => String(request.headers['webhook-id']))
  return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))]
}

const snapshot = async (target: DatabaseTarget) => {
  const storage = await openStorage(target)
  try {
    const tables = allProjections.flatMap((p) => p.tables)
    return {
      rows: Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await readModelRows(storage.db, table)] as const))),
      deliveries: (await storage.db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute()).map((d) => d.id),
    }
  } finally {
    await storage.close()
  }
}

/** Waits until every delivery so far was sent, then deletes them all (as a retention job would); returns their ids. */
async function purgeDeliveries(target: DatabaseTarget, receiver: HttpsReceiver): Promise<string[]> {
  const storage = await openStorage(target)
  try {
    await eventually('every delivery so far delivered', async () =>
      (await storage.db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute()).length === 0 ? true : undefined,
    )
    const ids = (await storage.db.selectFrom('webhook_deliveries').select('id').execute()).map((d) => d.id)
    await storage.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').execute()
      await trx.deleteFrom('webhook_deliveries').execute()
    })
    t.equal(new Set(receiver.requests.map((r) => String(r.headers['webhook-id']))).size, ids.length, 'each was received')
    return ids
  } finally {
    await storage.close()
  }
}

t.test('a rebuild of every read model beside a running service on Postgres: every request answered 2xx', { skip: postgresUrl ? false : 'needs DATABASE_URL' }, async (t) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const setup = await postgresStorage.prepare(t, { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: receiver.caFile, ...REBUILD_POOLS })
  const service = await startService(t, setup.env)
  const { apiKey } = await expect(service, setup.apiKey!, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  await expect(service, apiKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  // Some history for the rebuild to replay, its webhooks sent, then purged.
  for (let n = 0; n < 10; n++) t.same(await round(service, apiKey, n), [], `seed round ${n}`)
  const purged = await purgeDeliveries(setup.target, receiver)
  t.ok(purged.length >= 20, 'the first webhooks were sent, then purged')

  const failures: string[] = []
  let rounds = 0
  let rebuilding = true
  let stopAt = Number.POSITIVE_INFINITY
  const loop = async (id: number) => {
    for (let n = 0; Date.now() < stopAt; n++) {
      failures.push(...(await round(service, apiKey, 1000 * (id + 1) + n)))
      if (rebuilding) rounds++
    }
  }
  const traffic = Promise.all(Array.from({ length: LOOPS }, (_, id) => loop(id)))
  const rebuild = await runCli(['projections', 'rebuild'], setup.env, 240_000)
  rebuilding = false
  stopAt = Date.now() + AFTER_REBUILD_MS
  await traffic
  t.equal(rebuild.code, 0, `the rebuild succeeded ${assertionMessage(rebuild.stderr.slice(-400))}`)
  t.equal(rebuild.stdout.match(/rebuilt from \d+ events/g)?.length, allProjections.length, 'every read model was rebuilt')
  t.ok(rounds >= LOOPS, `clients kept working during the rebuild (${rounds} rounds)`)
  t.same(failures, [], 'no request answered other than 2xx')

  // Read models as the live service leaves them, against a replay of the whole log.
  const status = await runCli(['projections', 'status', '--json'], setup.env)
  t.equal(status.code, 0)
  await stopGracefully(service)
  const live = await snapshot(setup.target)
  const replay = await runCli(['projections', 'rebuild'], setup.env, 240_000)
  t.equal(replay.code, 0, `a replay with the service stopped ${assertionMessage(replay.stderr.slice(-400))}`)
  const replayed = await snapshot(setup.target)
  for (const table of Object.keys(live.rows)) t.same(live.rows[table], replayed.rows[table], `${table}: as a replay of the log makes it`)
  t.same(replayed.deliveries, live.deliveries, 'the replay made no delivery either')
  t.same(live.deliveries.filter((id) => purged.includes(id)), [], 'no purged delivery made again')
  t.same(receivedTwice(receiver), [], 'no webhook arrived twice')
})
