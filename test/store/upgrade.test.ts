import { readdirSync, readFileSync } from 'node:fs'
import { sql, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { openStorage, type Storage } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import { migrateTo, migrateToLatest } from '../../src/store/migrate.js'
import { openTestApp } from '../helpers/app.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { createTestDatabase, postgresUrl, type Backend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The migration chain applied to a database its service filled: the data the service of migration
// 0025 left (test/fixtures/data-at-migration-0025.json says how it was made) goes through every
// later migration, every row stays, the migrations fill what they add, and the service of today
// reads it, goes on from it, and rebuilds from its events the read models it finds.

const FIXTURE = JSON.parse(readFileSync(new URL('../fixtures/data-at-migration-0025.json', import.meta.url), 'utf8')) as { tables: Record<string, Record<string, unknown>[]> }
const FIXTURE_MIGRATION = '0025_preview_session_logs'
/** The service's clock in this test: just after the fixture's last event, before its sessions expire. */
const AFTER_FIXTURE = new Date('2026-11-28T20:35:00.000Z')

/** An empty database of each backend, not migrated; closed (and dropped) at the end of `t`. */
const emptyDatabases: { name: Backend['name']; open(t: Test): Promise<Storage> }[] = [
  {
    name: 'pglite',
    async open(t) {
      const storage = await openStorage({ kind: 'pglite' })
      t.teardown(() => storage.close())
      return storage
    },
  },
  ...(postgresUrl
    ? [
        {
          name: 'postgres' as const,
          async open(t: Test) {
            const database = await createTestDatabase(undefined, { empty: true })
            const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4, projectorPoolSize: 8 })
            t.teardown(async () => {
              await storage.close()
              await database.drop()
            })
            return storage
          },
        },
      ]
    : []),
]

/**
 * Writes the fixture's rows as they were, in one transaction: triggers off (the totals they keep
 * are among the rows), the log's positions kept and its identity moved past them.
 */
async function load(db: Kysely<Database>, tables: Record<string, Record<string, unknown>[]>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    for (const [table, rows] of Object.entries(tables)) {
      if (rows.length === 0) continue
      const columns = sql.join(Object.keys(rows[0]!).map((column) => sql.id(column)))
      await sql`insert into ${sql.table(table)} (${columns}) overriding system value
        select ${columns} from jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb)`.execute(trx)
    }
    await sql`select setval(pg_get_serial_sequence('events', 'global_position'), (select max(global_position) from events))`.execute(trx)
  })
}

/** Every row of every table of public but the migrations' own, as JSON objects, sorted. */
async function everyRow(db: Kysely<Database>): Promise<Record<string, Record<string, unknown>[]>> {
  const { rows: tables } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely%' order by table_name`.execute(db)
  const all: Record<string, Record<string, unknown>[]> = {}
  for (const { name } of tables) {
    const { rows } = await sql<{ row: Record<string, unknown> }>`select to_jsonb(r) as row from ${sql.table(name)} as r`.execute(db)
    all[name] = rows.map((r) => r.row).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  }
  return all
}

const only = (row: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((key) => [key, row[key]]))

for (const empty of emptyDatabases) {
  t.test(`a database its service filled at migration 0025, migrated to the latest, on ${empty.name}`, async (t) => {
    const storage = await empty.open(t)
    const { db } = storage
    t.equal((await migrateTo(db, FIXTURE_MIGRATION)).at(-1), FIXTURE_MIGRATION)
    await load(db, FIXTURE.tables)
    const before = await everyRow(db)

    const since = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => /^\d{4}_.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).filter((name) => name > FIXTURE_MIGRATION).sort()
    t.ok(since.includes('0030_create_webhook_destinations'), `${since.length} migrations since`)
    t.same(await migrateToLatest(db), since, 'the migrations since')
    const after = await everyRow(db)
    for (const [table, rows] of Object.entries(before)) {
      const columns = Object.keys(rows[0] ?? {})
      t.same(after[table]!.map((row) => only(row, columns)), rows, `${table}: its ${rows.length} rows as they were`)
    }
    const deliveries = after.webhook_deliveries as { workspace_id: string; status: string; callback_url: string | null; destination: string | null }[]
    t.same([...new Set(deliveries.map((d) => d.status))].sort(), ['dead', 'delivered', 'failed', 'pending', 'skipped'], 'deliveries in every state')
    for (const delivery of deliveries) {
      const open = delivery.status === 'pending' || delivery.status === 'failed'
      t.equal(delivery.destination, open ? new URL(delivery.callback_url!).origin : null, `a ${delivery.status} delivery's destination`)
    }

    // The service of today over it.
    const over: Backend = { name: empty.name, open: async () => storage }
    const { app, ctx, readModels } = await openTestApp(t, over, { engine: true, now: () => AFTER_FIXTURE })
    const acme = await db.selectFrom('organizations').select('id').where('name', '=', 'Acme').orderBy('created_at').executeTakeFirstOrThrow()
    const main = await db.selectFrom('workspaces').select('id').where('organization_id', '=', acme.id).where('name', '=', 'Main').executeTakeFirstOrThrow()
    const key = await issueApiKey(ctx, { organizationId: acme.id, workspaceId: main.id, name: 'after the upgrade', role: 'organization-admin', callbackUrl: null })
    const get = async (url: string) => {
      const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key.apiKey } })
      t.equal(response.statusCode, 200, `GET ${url}`)
      return response.json()
    }
    const names = (page: { content: { name: string }[] }) => page.content.map((item) => item.name).sort()

    t.same(names(await get('/v1/workspaces')), ['Main', 'Support'])
    await eventually('the new key in the list, after every event of the fixture', async () =>
      names(await get('/v1/api-keys?size=50')).includes('after the upgrade') ? true : undefined,
    )
    t.same(names(await get('/v1/api-keys?size=50')), ['after the upgrade', 'bootstrap', 'bot (prod)', 'flaky', 'support desk'], 'the revoked one left out')
    t.same(names(await get('/v1/sectors')), ['Billing and plans', 'Sales'])
    t.same(names(await get('/v1/variables?size=50')), ['name', 'plan', 'said', 'vip'])
    const flows = await get('/v1/flows?size=50')
    t.same(names(flows), ['Desk triage', 'Echo', 'Plans and leads', 'Quick'])
    const echo = flows.content.find((flow: { name: string }) => flow.name === 'Echo')
    t.same((await get(`/v1/flows/${echo.id}/versions`)).content.map((v: { version: number }) => v.version).sort(), [1, 2], 'its two published versions')
    t.match((await get(`/v1/flows/${echo.id}/analytics`)).sessions, { total: 7, running: 6, completed: 1 }, "its sessions' analytics")
    const [pipeline] = (await get('/v1/kanban/pipelines')).content
    t.equal(pipeline.name, 'Sales leads')
    t.equal((await get(`/v1/kanban/pipelines/${pipeline.id}/cards`)).totalElements, 4, "three made by hand (a fourth deleted) and a flow's")
    t.equal((await get(`/v1/kanban/pipelines/${pipeline.id}/cards?q=SILVA`)).totalElements, 1, 'found by their text')
    const logs = await get('/v1/sessions/logs?size=50')
    const statuses = (logs.content as { status: string }[]).map((log) => log.status)
    t.same(
      ['completed', 'running', 'timeout'].map((status) => [status, statuses.filter((s) => s === status).length]),
      [['completed', 4], ['running', 6], ['timeout', 1]],
      "Acme's sessions by status",
    )
    const completed = logs.content.find((log: { status: string }) => log.status === 'completed')
    t.ok((await get(`/v1/sessions/${completed.id}/events?size=100`)).totalElements > 2, 'a session read back from its events')
    t.ok((await get(`/v1/sessions/${completed.id}/transcript`)).entries.length > 2, 'and its transcript')
    const listed = await get('/v1/webhooks/deliveries?size=100')
    t.equal(listed.totalElements, deliveries.filter((d) => d.workspace_id === main.id).length, "Main's deliveries")

    // A session the old service left waiting at its question takes the next message.
    const waiting = await db
      .selectFrom('session_logs as s')
      .innerJoin('webhook_sessions as w', 'w.session_id', 's.id')
      .select('s.id')
      .where('s.status', '=', 'running')
      .where('s.flow_id', '=', echo.id)
      .where('w.callback_url', 'is not', null)
      .orderBy('s.started_at')
      .executeTakeFirstOrThrow()
    const sent = await app.inject({ method: 'POST', url: `/v1/sessions/${waiting.id}/message`, headers: { 'x-api-key': key.apiKey }, payload: { type: 'text', text: { body: 'after the upgrade' } } })
    t.equal(sent.statusCode, 202)
    const reply = await eventually('the reply to it, queued as a webhook', async () =>
      db.selectFrom('webhook_deliveries').select(['body', 'destination', 'callback_url']).where('session_id', '=', waiting.id).where('body', 'like', '%You said after the upgrade%').executeTakeFirst(),
    )
    t.equal(reply.destination, new URL(reply.callback_url!).origin, 'with its destination')
    const partitions = await db.selectFrom('engine_partition_count').select('partitions').executeTakeFirstOrThrow()
    t.equal(partitions.partitions, 16, "the engine recorded the partition count its checkpoints show")

    // Today's read models made from the fixture's events are those the migrations kept.
    await readModels.stop()
    const tables = allProjections.flatMap((projection) => projection.tables)
    const kept = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await readModelRows(db, table)] as const)))
    await rebuildProjections(storage, ctx.store, allProjections, { concurrency: 1 })
    for (const table of tables) t.same(await readModelRows(db, table), kept[table], `${table}: as a rebuild makes it`)
  })
}
