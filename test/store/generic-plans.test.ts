import { randomUUID } from 'node:crypto'
import { sql, type CompiledQuery, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import { appendGroup } from '../../src/eventstore/postgres.js'
import { updateLogs } from '../../src/projections/session-logs.js'
import { openStorage, type Storage } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { attemptsRecord, insertDeliveries } from '../../src/webhooks/deliveries.js'
import { createTestDatabase, postgresUrl } from '../helpers/storage.js'

// The statements the service runs hundreds of times a second are prepared, and Postgres keeps the
// generic plan it made for them while their tables were young. Each must still find its rows by
// index once the table has grown, with no ANALYZE in between: a plan that scans the table reads
// every row on every batch, and grows slower with every message.

const ROWS = 5_000

/** A value as a SQL literal, for `execute name(...)`: Postgres casts it to the parameter's type. */
const literal = (value: unknown): string => {
  if (value === null || value === undefined) return 'null'
  const text = Array.isArray(value) ? `{${value.map((item) => `"${String(item)}"`).join(',')}}` : String(value)
  return `'${text.replaceAll("'", "''")}'`
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Cond'?: string
  /** A bitmap heap scan's: the condition of the index scan under it. */
  'Recheck Cond'?: string
  Plans?: PlanNode[]
}

/** The scans of `table` in a plan (not the write to it): how each reads it, and whether by an index condition. */
function scansOf(node: PlanNode, table: string): string[] {
  const byIndex = node['Index Cond'] !== undefined || node['Recheck Cond'] !== undefined
  const own = node['Relation Name'] === table && node['Node Type'] !== 'ModifyTable' ? [`${node['Node Type']}${byIndex ? ' by index condition' : ''}`] : []
  return [...own, ...(node.Plans ?? []).flatMap((child) => scansOf(child, table))]
}

/**
 * The generic plan of `statement`, prepared and planned on one connection of `db` while `table`
 * holds a row or two, then shown again after `ROWS` more rows went in on the same connection.
 */
async function genericPlanAfterGrowth(db: Kysely<Database>, statement: CompiledQuery, table: string, grow: string): Promise<string[]> {
  return db.connection().execute(async (connection) => {
    await sql`set plan_cache_mode = force_generic_plan`.execute(connection)
    await sql.raw(`prepare young as ${statement.sql}`).execute(connection)
    const explain = sql.raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) execute young(${statement.parameters.map(literal).join(', ')})`)
    // Planned now, on the young table, and cached.
    await explain.execute(connection)
    await sql.raw(grow).execute(connection)
    const { rows } = await explain.execute(connection)
    await sql`deallocate young`.execute(connection)
    return scansOf(rows[0]!['QUERY PLAN'][0].Plan, table)
  })
}

async function openYoungDatabase(t: Test): Promise<Storage> {
  const database = await createTestDatabase()
  // One connection a pool, so each statement is prepared, planned and explained on the same one.
  const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 1, projectorPoolSize: 1, dispatcherPoolSize: 1 })
  t.teardown(async () => {
    await storage.close()
    await database.drop()
  })
  await migrateToLatest(storage.db)
  // No ANALYZE may come between the plan and the growth: it would replan and hide the fault.
  for (const table of ['streams', 'webhook_deliveries', 'webhook_sessions', 'session_logs']) {
    await sql.raw(`alter table ${table} set (autovacuum_enabled = off)`).execute(storage.db)
  }
  return storage
}

const everyScanByIndex = (t: Test, scans: string[]) => {
  t.ok(scans.length > 0, 'the table is read')
  t.same(scans.filter((scan) => !scan.endsWith('by index condition')), [], 'every read of the table is an index lookup')
}

if (postgresUrl) {
  t.test('an append to streams that exist finds their rows by index', async (t) => {
    const { db } = await openYoungDatabase(t)
    const stream = `session-${randomUUID()}`
    await sql`insert into streams (stream_id, revision) values (${stream}, 0)`.execute(db)
    const input = JSON.stringify([{ stream, expected: '0', events: [{ id: randomUUID(), type: 'Noted', data: {}, metadata: {} }] }])
    const scans = await genericPlanAfterGrowth(
      db,
      { sql: appendGroup.text, parameters: [input, [stream]] } as unknown as CompiledQuery,
      'streams',
      `insert into streams (stream_id, revision) select 'session-' || gen_random_uuid(), 0 from generate_series(1, ${ROWS})`,
    )
    everyScanByIndex(t, scans)
  })

  t.test("the dispatcher's attempt record finds its deliveries by index", async (t) => {
    const { dispatcherDb } = await openYoungDatabase(t)
    const id = randomUUID()
    const made = [{
      delivery: { id, leaseToken: randomUUID() },
      attempt: { attemptedAt: new Date(), statusCode: 200, error: null, durationMs: 3, responseBody: null, responseTruncated: false },
      outcome: { status: 'delivered' as const },
    }]
    const scans = await genericPlanAfterGrowth(
      dispatcherDb,
      attemptsRecord(made).compile(dispatcherDb),
      'webhook_deliveries',
      `insert into webhook_deliveries (id, organization_id, workspace_id, session_id, message_id, api_key_id, body, event_ids, source_commit, source_prepare, status, created_at)
       select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), '{}', '[]', n, n, 'delivered', now()
       from generate_series(1, ${ROWS}) n`,
    )
    everyScanByIndex(t, scans)
  })

  t.test("the outbox's deliveries find their sessions' routes by index", async (t) => {
    const { projectorDb } = await openYoungDatabase(t)
    const sessionId = randomUUID()
    const delivery = { id: randomUUID(), session_id: sessionId, message_id: randomUUID(), body: '{}', event_ids: [randomUUID()], source_commit: '1', source_prepare: '1', created_at: new Date().toISOString() }
    const scans = await genericPlanAfterGrowth(
      projectorDb,
      insertDeliveries([delivery], sql<boolean>`true`, true).compile(projectorDb),
      'webhook_sessions',
      `insert into webhook_sessions (session_id, organization_id, workspace_id, api_key_id, callback_url, active)
       select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'https://example.test/hook', true from generate_series(1, ${ROWS})`,
    )
    everyScanByIndex(t, scans)
  })

  t.test("the session logs' batch update finds its logs by index", async (t) => {
    const { projectorDb } = await openYoungDatabase(t)
    const change = { id: randomUUID(), expires_at: new Date().toISOString(), warnings: 0, status: null, finished_at: null, expired_at: null, failed_at: null }
    const scans = await genericPlanAfterGrowth(
      projectorDb,
      updateLogs('session_logs', [change], sql<boolean>`true`, true).compile(projectorDb),
      'session_logs',
      `insert into session_logs (id, workspace_id, organization_id, flow_id, flow_version, status, started_at, expires_at)
       select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 1, 'running', now(), now() + interval '1 hour' from generate_series(1, ${ROWS})`,
    )
    everyScanByIndex(t, scans)
  })
}
