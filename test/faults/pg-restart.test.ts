import { existsSync } from 'node:fs'
import pg from 'pg'
import t, { type Test } from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'
import { childEnv, cliPath as CLI, tempDir } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js'
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js'
import { START_TIMEOUT_MS, answers, running, spawnCli, startService, stopGracefully, until, within, type Service } from '../helpers/service-process.js'
import { sleep } from '../helpers/wait.js'
import { REQUEST_TIMEOUT_MS, call, expect, type Reply } from '../helpers/service-api.js'

// Acceptance: Postgres restarting (an immediate stop, a pause, a start) under a burst of sends
// leaves the same service process running, ready again without a restart, with nothing it
// acknowledged lost: one MessageReceived and one TurnCompleted per 202, and a webhook per turn.
// While the database is down, requests get a 503 in the spec's error shape with Retry-After.
//
// The shared server on DATABASE_URL is never stopped: the test initdb's a cluster of its own, and
// skips (saying why) where it cannot.

const SESSIONS = 6
const MESSAGES = 10
/** Stop Postgres once this many sends of the burst were acknowledged. */
const ACKS_BEFORE_STOP = 18
const DOWN_MS = 1_500
/** Longer while no sender has met the outage yet (a loaded machine), up to this. */
const MAX_DOWN_MS = 6_000
const RETRY_PAUSE_MS = 100
const BURST_TIMEOUT_MS = 30_000
const READY_TIMEOUT_MS = 20_000
const TURNS_TIMEOUT_MS = 20_000
/** A delivery whose attempt could not be recorded goes out again when its claim runs out (WEBHOOK_LEASE_SECONDS, 2 s by default). */
const WEBHOOKS_TIMEOUT_MS = 30_000

const WEBHOOK_ENV = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1' }

/** What a 5xx must never show: driver messages, addresses, SQL states, stacks. */
const LEAKS = /ECONN|connect|terminat|postgres|pg_|sql|57P0|\b08\d{3}\b|127\.0\.0\.1|:\d{4,5}\b|\bat .+\(|node_modules|\.js\b/i

/** Why a 5xx is not the clear "database unavailable" answer, or undefined when it is. */
function unclear(reply: Reply): string | undefined {
  const problems: string[] = []
  if (reply.status !== 503) problems.push(`status ${reply.status}`)
  const body = reply.body as { statusCode?: unknown; message?: unknown; error?: unknown } | undefined
  if (typeof body !== 'object' || body === null) problems.push('no JSON body')
  else {
    if (body.statusCode !== reply.status) problems.push(`statusCode ${String(body.statusCode)}`)
    if (body.error !== 'Service Unavailable') problems.push(`error ${String(body.error)}`)
    if (typeof body.message !== 'string' || body.message.length === 0) problems.push('no message')
    const keys = Object.keys(body).sort().join(',')
    if (keys !== 'error,message,statusCode') problems.push(`fields ${keys}`)
  }
  if (!/^[1-9]\d*$/.test(reply.retryAfter ?? '')) problems.push(`Retry-After ${String(reply.retryAfter)}`)
  if (LEAKS.test(reply.text)) problems.push('leaks internals')
  return problems.length ? `${problems.join(', ')}: ${reply.text}` : undefined
}

async function bootstrap(t: Test, env: NodeJS.ProcessEnv): Promise<string> {
  const proc = spawnCli(t, ['bootstrap', '--organization', 'O', '--workspace', 'W', '--json'], env)
  const exit = await within(proc.exited, START_TIMEOUT_MS, () => `bootstrap did not finish; output:\n${proc.output()}`)
  if (exit.code !== 0) throw new Error(`bootstrap failed (${exit.code ?? exit.signal}); output:\n${proc.output()}`)
  const { apiKey } = JSON.parse(proc.stdout().split('\n').find((l) => l.startsWith('{')) ?? '{}') as { apiKey?: string }
  if (!apiKey?.startsWith('wh_')) throw new Error(`bootstrap printed no admin key; output:\n${proc.output()}`)
  return apiKey
}

interface Send {
  sessionId: string
  key: string
  messageId: string | undefined
  attempts: number
}

interface Burst {
  sends: Send[]
  /** 5xx answers that are not a clear 503 (see `unclear`). */
  unclear: string[]
  /** 4xx answers and sends that never got their 202. */
  unexpected: string[]
  serverErrors: number
  networkErrors: number
  acksAtStop: number
  acksAfterStart: number
  /** How long Postgres was down. */
  downMs: number
  /** What requests made while Postgres was certainly down answered. */
  probes: { what: string; reply: Reply }[]
}

/**
 * Every session's sender sends MESSAGES messages in order, each with its own Idempotency-Key and
 * repeated (same key, fresh request) on a 5xx or a network error until it gets its 202. Once
 * ACKS_BEFORE_STOP are acknowledged, Postgres stops (immediate), requests probe the outage, and it
 * starts again after DOWN_MS once a sender has met the outage. The service is left alone throughout.
 */
async function burstAcrossRestart(service: Service, apiKey: string, sessionIds: string[], cluster: PrivatePostgres): Promise<Burst> {
  const sends: Send[] = []
  const unclearReplies: string[] = []
  const unexpected: string[] = []
  const probes: Burst['probes'] = []
  let serverErrors = 0
  let networkErrors = 0
  let acks = 0
  let acksAtStop = -1
  let acksAtStart = -1
  let downMs = -1
  const deadline = Date.now() + BURST_TIMEOUT_MS

  const restarter = (async () => {
    while (acks < ACKS_BEFORE_STOP && Date.now() < deadline && running(service)) await sleep(5)
    acksAtStop = acks
    const stoppedAt = Date.now()
    await cluster.stop({ mode: 'immediate' })
    const probe = async (what: string, method: 'GET' | 'POST', path: string, payload?: object) => {
      const reply = await call(service, apiKey, method, path, payload, { 'idempotency-key': `probe-${what}` }).catch(
        (error: unknown): Reply => ({ status: 0, body: undefined, text: String(error), retryAfter: null }),
      )
      probes.push({ what, reply })
    }
    await Promise.all([
      probe('send', 'POST', `/v1/sessions/${sessionIds[0]}/message`, { type: 'text', text: { body: 'probe' } }),
      probe('session', 'GET', `/v1/sessions/${sessionIds[0]}`),
      probe('list', 'GET', '/v1/workspaces'),
      probe('readyz', 'GET', '/readyz'),
    ])
    while (Date.now() - stoppedAt < MAX_DOWN_MS && (Date.now() - stoppedAt < DOWN_MS || serverErrors === 0)) await sleep(20)
    downMs = Date.now() - stoppedAt
    await cluster.start()
    acksAtStart = acks
  })()

  const sender = async (sessionId: string) => {
    for (let i = 1; i <= MESSAGES; i++) {
      const send: Send = { sessionId, key: `${sessionId}:${i}`, messageId: undefined, attempts: 0 }
      sends.push(send)
      while (send.messageId === undefined && Date.now() < deadline && running(service)) {
        send.attempts++
        let reply: Reply
        try {
          reply = await call(service, apiKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${i}` } }, { 'idempotency-key': send.key })
        } catch {
          networkErrors++
          await sleep(RETRY_PAUSE_MS)
          continue
        }
        if (reply.status === 202 && typeof reply.body?.messageId === 'string') {
          send.messageId = reply.body.messageId
          acks++
        } else if (reply.status >= 500) {
          serverErrors++
          const problem = unclear(reply)
          if (problem) unclearReplies.push(`${send.key} attempt ${send.attempts}: ${problem}`)
          await sleep(RETRY_PAUSE_MS)
        } else {
          unexpected.push(`${send.key}: ${reply.status} ${reply.text}`)
          return
        }
      }
      if (send.messageId === undefined) {
        unexpected.push(`${send.key}: no 202 ${running(service) ? `within ${BURST_TIMEOUT_MS} ms` : 'before the service exited'} (${send.attempts} attempts)`)
        return
      }
    }
  }

  await within(Promise.all([restarter, ...sessionIds.map(sender)]), BURST_TIMEOUT_MS + 2 * REQUEST_TIMEOUT_MS, () => 'the burst did not end')
  return { sends, unclear: unclearReplies, unexpected, serverErrors, networkErrors, acksAtStop, acksAfterStart: acks - acksAtStart, downMs, probes }
}

interface TurnEvents {
  received: Map<string, number>
  completed: Map<string, number>
  /** MessageReceived events per Idempotency-Key. */
  keys: Map<string, number>
}

async function readTurnEvents(url: string): Promise<TurnEvents> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ event_type: string; message_id: string; idempotency_key: string | null }>(
      `select event_type, data->>'messageId' as message_id, data->>'idempotencyKey' as idempotency_key
       from events where event_type in ('MessageReceived', 'TurnCompleted')`,
    )
    const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)
    const events: TurnEvents = { received: new Map(), completed: new Map(), keys: new Map() }
    for (const row of rows) {
      if (row.event_type === 'MessageReceived') {
        count(events.received, row.message_id)
        if (row.idempotency_key !== null) count(events.keys, row.idempotency_key)
      } else count(events.completed, row.message_id)
    }
    return events
  } finally {
    await client.end()
  }
}

/** Backends of the service LISTENing for appends of other processes (their last statement is the LISTEN). */
async function listeners(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ count: string }>(
      `select count(*) as count from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() and query ilike 'listen %'`,
    )
    return Number(rows[0]!.count)
  } finally {
    await client.end()
  }
}

const webhookOf = (request: ReceivedRequest) => {
  const body = JSON.parse(request.body) as { sessionId: string; messageId: string }
  return { webhookId: String(request.headers['webhook-id']), sessionId: body.sessionId, messageId: body.messageId }
}

t.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`)
})

const outcome = await startPrivatePostgres(t)
const skip = 'skip' in outcome ? `needs a private Postgres cluster the test can stop: ${outcome.skip}` : false

t.test('Postgres restarts under a burst of sends: the same process recovers and loses nothing acknowledged', { skip }, async (t) => {
  if (!('cluster' in outcome)) return
  const { cluster } = outcome
  const started = Date.now()
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const env = childEnv({ ...WEBHOOK_ENV, WEBHOOK_CA_FILE: receiver.caFile, DATA_DIR: tempDir(t), DATABASE_URL: cluster.url })

  const admin = await bootstrap(t, env)
  const service = await startService(t, env)
  const pid = service.child.pid
  let exitedEarly: string | undefined
  void service.exited.then((exit) => (exitedEarly ??= `exited (${exit.code ?? exit.signal})`))

  const { apiKey } = await expect(service, admin, 201, 'POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })
  await expect(service, apiKey, 201, 'POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await expect(service, apiKey, 201, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  const sessionIds: string[] = await Promise.all(
    Array.from({ length: SESSIONS }, async () => (await expect(service, apiKey, 201, 'POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string),
  )
  await until(service, 'the LISTEN connection before the burst', READY_TIMEOUT_MS, async () => (await listeners(cluster.url)) > 0)

  const setupMs = Date.now() - started
  const burstStarted = Date.now()
  const burst = await burstAcrossRestart(service, apiKey, sessionIds, cluster)
  const burstMs = Date.now() - burstStarted

  t.equal(exitedEarly, undefined, 'the service process never exited')
  t.ok(running(service) && service.child.pid === pid, `the same process (pid ${pid}) is still running`)
  t.ok(burst.acksAtStop >= ACKS_BEFORE_STOP, `Postgres stopped mid-burst, after ${burst.acksAtStop} acknowledged sends`)
  t.ok(burst.acksAfterStart > 0, `sends were acknowledged after Postgres started again (${burst.acksAfterStart})`)
  t.same(burst.unexpected, [], 'every send ended with its 202, nothing else but a 5xx on the way')
  if (exitedEarly) {
    t.comment(`service output:\n${assertionMessage(service.output(), { keepLineBreaks: true, maxLength: Infinity })}`)
    return
  }

  const probed = new Map(burst.probes.map((p) => [p.what, p.reply]))
  t.equal(probed.get('readyz')?.status, 503, '/readyz answered 503 while Postgres was down')
  for (const what of ['send', 'session', 'list']) {
    const reply = probed.get(what)!
    t.equal(unclear(reply), undefined, `a ${what} request while Postgres was down: a 503 in the spec's shape with Retry-After, no internals`, {
      reply: reply.text,
    })
  }
  t.ok(burst.serverErrors > 0, `senders saw the outage (${burst.serverErrors} 5xx answers, retried)`)
  t.same(burst.unclear, [], "every 5xx a sender saw was a clear 503 in the spec's shape with Retry-After")

  await until(service, 'GET /readyz to answer 200 again', READY_TIMEOUT_MS, () => answers(`${service.base}/readyz`, 200))
  t.pass('/readyz is ready again without a restart')
  const readyMs = Date.now() - burstStarted - burstMs
  await until(service, 'a LISTEN connection again', READY_TIMEOUT_MS, async () => (await listeners(cluster.url)) > 0).then(
    () => t.pass('the LISTEN connection for wake-ups is back'),
    (error: unknown) => t.fail(`no LISTEN connection came back: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
  )

  const acknowledged = burst.sends.filter((s) => s.messageId !== undefined).map((s) => s.messageId!)
  t.equal(acknowledged.length, SESSIONS * MESSAGES, `every send was acknowledged (${acknowledged.length})`)
  let events: TurnEvents | undefined
  await until(service, 'a TurnCompleted for every acknowledged message', TURNS_TIMEOUT_MS, async () => {
    events = await readTurnEvents(cluster.url)
    return acknowledged.every((id) => events!.completed.has(id))
  }).catch((error: unknown) => t.fail(error instanceof Error ? error.message.split('\n')[0]! : String(error)))
  events = await readTurnEvents(cluster.url)
  const countsOf = (map: Map<string, number>) => acknowledged.filter((id) => map.get(id) !== 1).map((id) => `${id}: ${map.get(id) ?? 0}`)
  t.same(countsOf(events.received), [], 'every acknowledged message has exactly one MessageReceived')
  t.same(countsOf(events.completed), [], 'every acknowledged message has exactly one TurnCompleted')
  t.same(
    burst.sends.map((s) => s.key).filter((key) => events!.keys.get(key) !== 1),
    [],
    'each Idempotency-Key was received once however often its send was repeated',
  )
  t.equal(new Set(acknowledged).size, acknowledged.length, 'no two sends were acknowledged with one messageId')

  const startTurns = [...events.completed.keys()].filter((id) => !events!.received.has(id))
  const expected = new Set([...acknowledged, ...startTurns])
  t.equal(startTurns.length, SESSIONS, 'each session has its start turn')
  const arrived = () => new Set(receiver.requests.map((r) => webhookOf(r).messageId))
  await until(service, 'a webhook for every turn', WEBHOOKS_TIMEOUT_MS, async () => [...expected].every((id) => arrived().has(id))).catch((error: unknown) =>
    t.fail(error instanceof Error ? error.message.split('\n')[0]! : String(error)),
  )
  const webhooksMs = Date.now() - burstStarted - burstMs - readyMs
  const missing = [...expected].filter((id) => !arrived().has(id))
  t.same(missing, [], 'every turn (each acknowledged message and each start) arrived at the receiver in a webhook')
  const idsByMessage = new Map<string, Set<string>>()
  for (const w of receiver.requests.map(webhookOf)) idsByMessage.set(w.messageId, (idsByMessage.get(w.messageId) ?? new Set()).add(w.webhookId))
  t.same(
    [...idsByMessage].filter(([, ids]) => ids.size !== 1).map(([id, ids]) => `${id}: ${[...ids].join(', ')}`),
    [],
    'repeats of a turn’s webhook share its webhook-id',
  )
  for (const sessionId of sessionIds) {
    const sent = burst.sends.filter((s) => s.sessionId === sessionId).map((s) => s.messageId)
    const order = [...new Set(receiver.requests.map(webhookOf).filter((w) => w.sessionId === sessionId && sent.includes(w.messageId)).map((w) => w.messageId))]
    t.same(order, sent, `session ${sessionId}: its turns' webhooks first arrived in send order`)
  }

  const exit = await stopGracefully(service)
  t.same(exit, { code: 0, signal: null }, 'the service still stops cleanly on SIGTERM', { output: service.output() })
  t.comment(
    `${acknowledged.length} sends acknowledged (${burst.acksAtStop} before the stop, ${burst.acksAfterStart} after the start), Postgres down ${burst.downMs} ms; ` +
      `${burst.serverErrors} 5xx and ${burst.networkErrors} network errors retried; ${receiver.requests.length} webhooks for ${expected.size} turns; ` +
      `setup ${setupMs} ms, burst ${burstMs} ms, ready ${readyMs} ms after it, turns and webhooks ${webhooksMs} ms, ${Date.now() - started} ms in all`,
  )
})
