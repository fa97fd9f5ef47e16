// Benchmark 5, lists at scale: 1,000,000 session logs and 1,000,000 cards across 100 workspaces of
// one organization, the service running as a child process; per case (each filter of
// GET /v1/sessions/logs and of GET /v1/kanban/pipelines/{id}/cards on its own, a first and a deep
// page, and `q`) a warm-up and then 200 requests from a load process. Goal: p99 < 25 ms in every case.
//
// The rows go straight into the read models (lib/generate.ts, generateReadModels) rather than through
// events and a rebuild: what is measured is reading the tables, and 2,000,000 sessions and cards
// would be about 10,000,000 events and, at today's rebuild speed (benchmark 4), hours of setup.
// Workspaces, keys and pipelines are made through the API.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely'
import pg from 'pg'
import { listCards } from '../src/projections/cards.js'
import { listSessionLogs, type SessionLogQuery } from '../src/projections/session-logs.js'
import type { Database } from '../src/store/database.js'
import { Api, echoFlow } from './lib/api.js'
import { createBenchDatabase, postgresSettings, type BenchDatabase } from './lib/db.js'
import { benchDist } from './lib/env.js'
import { createTenants, generateReadModels, type Tenant } from './lib/generate.js'
import { DEPLOYED_MAX_OLD_SPACE_MIB, bootstrap, cpuWindow, runWorker, startService } from './lib/processes.js'
import { figure } from './lib/results.js'
import { round } from './lib/stats.js'
import type { ListCase, ListCaseResult, ListLoadInput } from './load/list-load.js'
import type { BenchmarkRun } from './run.js'

export interface ListsSettings {
  sessionLogs: number
  cards: number
  workspaces: number
  warmup: number
  requests: number
  concurrency: number
  /** Longest a case measures (a case of 1 s requests would take minutes); at least 30 requests are timed. */
  caseSeconds: number
  /** EXPLAIN (ANALYZE, BUFFERS) the SQL of this many slowest cases. */
  explainSlowest: number
}

export const defaultListsSettings: ListsSettings = { sessionLogs: 1_000_000, cards: 1_000_000, workspaces: 100, warmup: 20, requests: 200, concurrency: 1, caseSeconds: 30, explainSlowest: 5 }

const MiB = 2 ** 20
const GOAL_MS = 25

type LogParams = Partial<Pick<SessionLogQuery, 'orderBy' | 'workspaceId' | 'sessionId' | 'status' | 'dateRange'>> & { page?: number; size?: number; direction?: 'ASC' | 'DESC' }
type CardParams = { stageId?: string; q?: string; createdAfter?: string; tags?: string; page?: number; size?: number }

type Case = ListCase & ({ kind: 'logs'; params: LogParams } | { kind: 'cards'; params: CardParams })

const query = (params: Record<string, unknown>) => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined)
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}` : ''
}

async function buildCases(db: BenchDatabase, admin: string, tenant: Tenant): Promise<Case[]> {
  const one = async (text: string, values?: unknown[]) => (await db.query(text, values)).rows[0] as Record<string, any>
  const orgRows = Number((await one('select count(*) as n from session_logs')).n)
  const wsRows = Number((await one('select count(*) as n from session_logs where workspace_id = $1', [tenant.workspaceId])).n)
  const cardRows = Number((await one('select count(*) as n from kanban_cards where pipeline_id = $1', [tenant.pipeline.id])).n)
  const sessionId = (await one('select id from session_logs where workspace_id = $1 order by started_at offset $2 limit 1', [tenant.workspaceId, Math.floor(wsRows / 2)])).id as string
  const code = (await one("select field_values ->> $2 as c from kanban_cards where pipeline_id = $1 order by created_at offset $3 limit 1", [tenant.pipeline.id, tenant.pipeline.fields.company, Math.floor(cardRows / 3)])).c as string
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString()
  const logs = (name: string, params: LogParams): Case => ({ kind: 'logs', name: `logs: ${name}`, apiKey: admin, path: `/v1/sessions/logs${query(params)}`, params })
  const cards = (name: string, params: CardParams): Case => ({
    kind: 'cards',
    name: `cards: ${name}`,
    apiKey: tenant.apiKey,
    path: `/v1/kanban/pipelines/${tenant.pipeline.id}/cards${query(params)}`,
    params,
  })
  const middle = (rows: number, size: number) => Math.max(0, Math.floor(rows / size / 2))
  return [
    logs('first page', {}),
    logs('first page, newest first', { orderBy: 'startedAt', direction: 'DESC' }),
    logs(`deep page (page ${middle(orgRows, 100)} of 100)`, { page: middle(orgRows, 100), size: 100 }),
    logs('workspaceId (the largest workspace)', { workspaceId: tenant.workspaceId }),
    logs(`workspaceId, deep page (page ${middle(wsRows, 100)} of 100)`, { workspaceId: tenant.workspaceId, page: middle(wsRows, 100), size: 100 }),
    logs('status=running', { status: 'running' }),
    logs('status=error', { status: 'error' }),
    logs('dateRange=today', { dateRange: 'today' }),
    logs('dateRange=last7days', { dateRange: 'last7days' }),
    logs('dateRange=last30days', { dateRange: 'last30days' }),
    logs('sessionId', { sessionId }),
    logs('orderBy=finishedAt DESC', { orderBy: 'finishedAt', direction: 'DESC' }),
    logs('workspaceId + status=completed + last7days, newest first', { workspaceId: tenant.workspaceId, status: 'completed', dateRange: 'last7days', orderBy: 'startedAt', direction: 'DESC' }),
    cards('first page', {}),
    cards(`deep page (page ${middle(cardRows, 100)} of 100)`, { page: middle(cardRows, 100) }),
    cards('stageId', { stageId: tenant.pipeline.stageIds[2] }),
    cards('tags=vip', { tags: 'vip' }),
    cards('tags=vip,renewal', { tags: 'vip,renewal' }),
    cards('createdAfter (7 days ago)', { createdAfter: weekAgo }),
    cards('q=silva (a common word)', { q: 'silva' }),
    cards('q=<a card code> (one card)', { q: code.split(' ').pop()! }),
    cards('stageId + tags=lead + q=alimentos', { stageId: tenant.pipeline.stageIds[0], tags: 'lead', q: 'alimentos' }),
  ]
}

/** The SQL each case runs, caught from the list functions themselves, with EXPLAIN (ANALYZE, BUFFERS). */
async function explainCases(db: BenchDatabase, cases: Case[], organizationId: string, tenant: Tenant): Promise<Record<string, { sql: string; executionMs: number; plan: string }[]>> {
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  const captured: CompiledQuery[] = []
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query)
    },
  })
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  const plans: Record<string, { sql: string; executionMs: number; plan: string }[]> = {}
  try {
    for (const c of cases) {
      captured.length = 0
      if (c.kind === 'logs') {
        const p = c.params
        await listSessionLogs(kysely, { organizationId, page: p.page ?? 0, size: p.size ?? 10, direction: p.direction ?? 'ASC', now: new Date(), ...p })
      } else {
        const p = c.params
        await listCards(kysely, {
          pipelineId: tenant.pipeline.id,
          sumFieldIds: [tenant.pipeline.fields.amount, tenant.pipeline.fields.seats],
          ...(p.stageId ? { stageId: p.stageId } : {}),
          ...(p.q ? { q: p.q } : {}),
          ...(p.createdAfter ? { createdAfter: p.createdAfter } : {}),
          ...(p.tags ? { tags: p.tags.split(',') } : {}),
          page: p.page ?? 0,
          size: p.size ?? 100,
        })
      }
      const statements = [...captured].filter((q) => !/from "workspaces"/.test(q.sql))
      plans[c.name] = []
      for (const statement of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.sql}`, [...statement.parameters])
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n')
        plans[c.name]!.push({ sql: statement.sql, executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1]), plan })
      }
    }
  } finally {
    await client.end()
    await kysely.destroy()
  }
  return plans
}

export async function lists(settings: ListsSettings, notes: string[]): Promise<BenchmarkRun> {
  const db = await createBenchDatabase('lists')
  try {
    const setupDir = mkdtempSync(join(tmpdir(), 'flowd-bench-'))
    const admin = await bootstrap(db.url, setupDir).finally(() => rmSync(setupDir, { recursive: true, force: true }))
    const service = await startService({
      databaseUrl: db.url,
      env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' },
      // The heap cap every deployed flowd process runs with (the image's NODE_OPTIONS).
      nodeArgs: [`--max-old-space-size=${DEPLOYED_MAX_OLD_SPACE_MIB}`],
    })
    try {
      const api = new Api(service.base, admin.apiKey)
      const setupStarted = Date.now()
      const tenants = await createTenants(api, settings.workspaces)
      await api.call('POST', '/v1/variables', 201, { name: 'said', type: 'string' })
      const flow = await api.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Echo', definition: echoFlow })
      const organizationId = (await db.query<{ organization_id: string }>('select organization_id from workspaces where id = $1', [admin.workspaceId])).rows[0]!.organization_id
      process.stdout.write(`  ${tenants.length} workspaces, keys and pipelines made through the API in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s\n`)
      const generated = await generateReadModels(db, tenants, organizationId, flow.id, { sessionLogs: settings.sessionLogs, cards: settings.cards }, (t) => process.stdout.write(`    ${t}\n`))
      process.stdout.write(`  ${settings.sessionLogs} session logs and ${settings.cards} cards inserted in ${generated.seconds.toFixed(1)} s\n`)
      await db.query('checkpoint')
      const tenant = tenants[0]!
      const cases = await buildCases(db, admin.apiKey, tenant)
      process.stdout.write(`  ${cases.length} cases × (${settings.warmup} warm-up + ${settings.requests} measured) requests, concurrency ${settings.concurrency}\n`)
      const cpu = cpuWindow(service.pid)
      const results = await runWorker<ListLoadInput, ListCaseResult[]>(
        join(benchDist, 'load', 'list-load.js'),
        { base: service.base, cases: cases.map(({ name, path, apiKey }) => ({ name, path, apiKey })), warmup: settings.warmup, requests: settings.requests, concurrency: settings.concurrency, caseSeconds: settings.caseSeconds, minRequests: 30 },
        30 * 60_000,
      )
      const cpuUse = cpu.end()
      const peakRss = service.peakRssBytes()
      for (const r of results) process.stdout.write(`    ${r.name.padEnd(64)} p50 ${r.latencyMs.p50.toFixed(1).padStart(7)} ms  p99 ${r.latencyMs.p99.toFixed(1).padStart(7)} ms  (${r.latencyMs.count} requests; ${r.totalElements} matching)\n`)
      const cut = results.filter((r) => r.latencyMs.count < settings.requests)
      if (cut.length) notes.push(`slow cases stopped after ${settings.caseSeconds} s of measuring, with fewer than ${settings.requests} requests: ${cut.map((r) => `${r.name} (${r.latencyMs.count})`).join('; ')}`)
      const slowest = [...results].sort((a, b) => b.latencyMs.p99 - a.latencyMs.p99).slice(0, settings.explainSlowest)
      process.stdout.write(`  EXPLAIN (ANALYZE, BUFFERS) of the ${slowest.length} slowest cases\n`)
      const plans = await explainCases(db, cases.filter((c) => slowest.some((s) => s.name === c.name)), organizationId, tenant)
      const worst = slowest[0]!
      const errors = results.reduce((a, r) => a + r.errors, 0)
      const sizes = await db.query<{ relname: string; size: string }>(
        `select c.relname, pg_size_pretty(pg_total_relation_size(c.oid)) as size from pg_class c
         where c.relname in ('session_logs', 'kanban_cards') or (c.relkind = 'i' and c.relname like any (array['session_logs%', 'kanban_cards%'])) order by 1`,
      )
      const figures = [
        ...results.map((r) => figure(`p99:${r.name}`, `${r.name} — p99 (p50 ${round(r.latencyMs.p50, 1)} ms)`, round(r.latencyMs.p99, 1), 'ms', { op: '<', value: GOAL_MS })),
        figure('worst_p99_ms', `worst case p99 (${worst.name})`, round(worst.latencyMs.p99, 1), 'ms', { op: '<', value: GOAL_MS }),
        figure('peak_rss_mib', 'service peak RSS', round((peakRss ?? Number.NaN) / MiB), 'MiB', { op: '<', value: 300 }),
        figure('errors', 'answers other than 200', errors, '', { op: '<', value: 1 }),
      ]
      return {
        settings: { ...settings, serviceMaxOldSpaceMiB: DEPLOYED_MAX_OLD_SPACE_MIB, postgres: await postgresSettings() },
        figures,
        details: {
          rows: { sessionLogs: settings.sessionLogs, cards: settings.cards, largestWorkspaceLogs: results.find((r) => r.name.startsWith('logs: workspaceId ('))?.totalElements, largestPipelineCards: results.find((r) => r.name === 'cards: first page')?.totalElements },
          generationSeconds: generated.seconds,
          cases: results,
          cpu: cpuUse,
          relationSizes: Object.fromEntries(sizes.rows.map((r) => [r.relname, r.size])),
          explain: plans,
        },
      }
    } finally {
      await service.stop()
    }
  } finally {
    await db.drop()
  }
}
