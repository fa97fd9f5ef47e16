// Benchmark 10, replays: how many real sessions a second the service plays again against a draft.
// The service runs as a child process on a fresh Postgres database. 5,000 sessions of a flow that
// asks a question and answers from one of two A/B branches each get one message (their answer turn
// recorded); the draft then changes branch b's answer, and one replay plays all of them against it.
// The figure is sessions replayed per second, from the 202 to `finished`, with the service's CPU
// time over the same window; about half of them differ, so the report's cap is reached too.

import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Api, inParallel } from './lib/api.js'
import { createBenchDatabase } from './lib/db.js'
import { bootstrap, cpuWindow, processCpuSeconds, sleep, startService } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import type { BenchmarkRun } from './run.js'

export interface ReplaysSettings {
  /** Sessions recorded, then replayed (at most 5,000, a replay's limit). */
  sessions: number
  /** Requests in flight while the sessions are recorded. */
  connections: number
  /** How long the replay is waited for. */
  drainSeconds: number
}

export const defaultReplaysSettings: ReplaysSettings = { sessions: 5000, connections: 32, drainSeconds: 600 }

/** Asks for an order number, then answers it from branch a or b of an even split. */
const splitFlow = (branchB: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Your order number?' } }, input: { kind: 'text' }, saveAs: 'order' } },
    { id: 'split', type: 'split', position: { x: 400, y: 0 }, data: { branches: [{ id: 'a', weight: 50 }, { id: 'b', weight: 50 }] } },
    { id: 'answerA', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Order {{order}} is on its way' } }] } },
    { id: 'answerB', type: 'message', position: { x: 600, y: 200 }, data: { messages: [{ type: 'text', text: { body: branchB } }] } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'default', target: 'split' },
    { id: 'e3', source: 'split', sourceHandle: 'a', target: 'answerA' },
    { id: 'e4', source: 'split', sourceHandle: 'b', target: 'answerB' },
  ],
})

interface Replay {
  status: string
  total: number
  checked: number
  differingCount: number
}

export async function replays(settings: ReplaysSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('replays')
  const dataDir = mkdtempSync(join(tmpdir(), 'flowd-bench-replays-'))
  const { apiKey } = await bootstrap(db.url, dataDir)
  const service = await startService({ databaseUrl: db.url, dataDir, env: { RATE_LIMIT_PER_MINUTE: '0' } })
  try {
    const client = new Api(service.base, apiKey)
    await client.call('POST', '/v1/variables', 201, { name: 'order', type: 'string' })
    const flow = await client.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Orders', definition: splitFlow('Order {{order}} ships tomorrow') })
    process.stdout.write(`  recording ${settings.sessions} sessions\n`)
    const sessions = await inParallel(settings.sessions, settings.connections, async () => (await client.call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, 201)).sessionId)
    await inParallel(settings.sessions, settings.connections, (i) => client.call('POST', `/v1/sessions/${sessions[i]}/message`, 202, { type: 'text', text: { body: String(1000 + i) } }))
    const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n)
    // Both turns of every session recorded, and every session in the read model a replay chooses from.
    while ((await count(`select count(*) as n from events where event_type = 'TurnCompleted'`)) < 2 * settings.sessions) await sleep(200)
    while ((await count(`select count(*) as n from analytics_sessions where turns >= 2`)) < settings.sessions) await sleep(200)
    await client.call('PUT', `/v1/flows/${flow.id}/definition`, 200, splitFlow('Order {{order}} ships next week'))

    process.stdout.write(`  replaying them against the draft\n`)
    const window = cpuWindow(service.pid)
    const cpu0 = processCpuSeconds(service.pid)
    const started = performance.now()
    const { replayId } = await client.call<{ replayId: string }>('POST', `/v1/flows/${flow.id}/replays`, 202, { version: 1, sessions: { last: settings.sessions } })
    const deadline = Date.now() + settings.drainSeconds * 1000
    let replay: Replay | undefined
    do {
      await sleep(100)
      // The list's summaries: polling the report itself would fetch its 1,000 kept sessions every time.
      const { content } = await client.call<{ content: (Replay & { id: string })[] }>('GET', `/v1/flows/${flow.id}/replays`, 200)
      replay = content.find((summary) => summary.id === replayId)
    } while (replay?.status !== 'finished' && Date.now() < deadline)
    if (!replay) throw new Error(`replay ${replayId} is not in the flow's list`)
    const seconds = (performance.now() - started) / 1000
    const cpuSeconds = processCpuSeconds(service.pid) - cpu0
    const cpu = window.end()
    if (replay.status !== 'finished') notes.push(`the replay had checked ${replay.checked} of ${replay.total} sessions after ${settings.drainSeconds} s`)
    if (replay.total !== settings.sessions) notes.push(`the replay chose ${replay.total} sessions of ${settings.sessions}`)
    return {
      settings: { ...settings },
      figures: [
        figure('sessions_replayed_per_s', 'sessions replayed', round(replay.checked / seconds, 1), 'sessions/s', { op: '>=', value: 100 }),
        figure('replay_seconds', 'the whole replay', round(seconds, 1), 's'),
        figure('service_cpu_ms_per_session', 'service CPU per session', round((cpuSeconds * 1000) / Math.max(1, replay.checked), 2), 'ms'),
      ],
      details: { replay, seconds: round(seconds, 2), serviceCpuSeconds: round(cpuSeconds, 2), cpu },
    }
  } finally {
    await service.stop()
    await db.drop()
  }
}
