import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { RebuildWouldDropError } from '../../src/projections/shadow-dependents.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { SHADOW_SCHEMA } from '../../src/projections/shadow.js'
import type { Database } from '../../src/store/database.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import { silentLogger } from '../helpers/app.js'
import { outboxGate } from '../helpers/held-outbox.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { sessionsOn } from '../helpers/session-events.js'
import { reachableBackends } from '../helpers/storage.js'

// What an operator hangs on a read model's table (views, a materialized view, a foreign key) and
// gives it (privileges, a comment, row security) is still there after a rebuild's swap, as it was; what the swap cannot make again is named, and the rebuild
// refuses before touching anything.

const waitUntil = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting until ${what}`)
}

const columnAcl = sql`(select string_agg(a.attname || ' ' || a.attacl::text, ', ' order by a.attnum) from pg_attribute a where a.attrelid = c.oid and a.attacl is not null)`

/** The operator's objects as the catalog describes them: owner, options, privileges, comments, indexes, constraints. */
async function describeReports(db: Kysely<Database>) {
  const { rows } = await sql<{ relation: string; kind: string; owner: string; options: string[] | null; acl: string | null; columnAcl: string | null; comment: string | null; columns: string | null; indexes: string | null; keys: string | null }>`
    select c.relname as relation, c.relkind as kind, pg_get_userbyid(c.relowner) as owner, c.reloptions as options, c.relacl::text as acl, ${columnAcl} as "columnAcl",
      obj_description(c.oid, 'pg_class') as comment,
      (select string_agg(a.attname || ': ' || col_description(c.oid, a.attnum), ', ' order by a.attnum) from pg_attribute a
       where a.attrelid = c.oid and a.attnum > 0 and col_description(c.oid, a.attnum) is not null) as columns,
      (select string_agg(pg_get_indexdef(i.indexrelid), ', ') from pg_index i where i.indrelid = c.oid) as indexes,
      (select string_agg(k.conname || ' ' || pg_get_constraintdef(k.oid), ', ') from pg_constraint k where k.conrelid = c.oid and k.contype = 'f') as keys
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'reports' and c.relkind in ('r', 'v', 'm')
    order by c.relname`.execute(db)
  return rows
}

/** What the read model's table has of its own: owner, privileges, comment, row security, policies. */
async function describeTable(db: Kysely<Database>) {
  const { rows } = await sql<{ owner: string; acl: string | null; columnAcl: string | null; comment: string | null; rowSecurity: boolean; policies: string | null }>`
    select pg_get_userbyid(c.relowner) as owner, c.relacl::text as acl, ${columnAcl} as "columnAcl", obj_description(c.oid, 'pg_class') as comment, c.relrowsecurity as "rowSecurity",
      (select string_agg(concat_ws(' ', p.policyname, p.permissive, p.cmd, p.roles::text, p.qual, p.with_check), ', ' order by p.policyname)
       from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname) as policies
    from pg_class c where c.oid = 'public.webhook_sessions'::regclass`.execute(db)
  return rows[0]
}

/** A database whose outbox has one session's route, built by a rebuild. */
async function outboxOfOneSession(t: Test, backend: (typeof reachableBackends)[number]) {
  const storage = await backend.open(t)
  const { db } = storage
  const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
  t.teardown(() => store.close())
  const { startSession, say } = sessionsOn(store, db)
  await say(await startSession(), 'hello')
  await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })
  return { storage, db, store }
}

const tableOid = async (db: Kysely<Database>) => (await sql<{ oid: number }>`select 'public.webhook_sessions'::regclass::oid::int as oid`.execute(db)).rows[0]!.oid

for (const backend of reachableBackends) {
  t.test(`a swap keeps the views, materialized views and foreign keys on a read model's table, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const { startSession, say, deliveries } = sessionsOn(store, db)
    const sessions = [await startSession(), await startSession()]
    for (const sessionId of sessions) await say(sessionId, 'hello')
    const live = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
    await live.start()
    await waitUntil(async () => Object.keys(await deliveries()).length === 2, 'the live outbox applies the log')
    await live.stop()

    // Roles belong to the server, shared by every test database.
    const suffix = randomBytes(4).toString('hex')
    const [owner, reader] = [`report_owner_${suffix}`, `report_reader_${suffix}`]
    t.teardown(async () => {
      await sql`drop schema if exists reports cascade`.execute(db).catch(() => {})
      await sql`drop owned by ${sql.id(reader)}`.execute(db).catch(() => {})
      for (const role of [owner, reader]) await sql`drop role if exists ${sql.id(role)}`.execute(db).catch(() => {})
    })
    for (const role of [owner, reader]) await sql`create role ${sql.id(role)} nologin`.execute(db)
    await sql`create schema reports`.execute(db)
    await sql`grant usage, create on schema reports to ${sql.id(owner)}`.execute(db)
    await sql`create view reports.routes with (security_barrier = true, security_invoker = true) as select session_id, callback_url from public.webhook_sessions`.execute(db)
    await sql`comment on view reports.routes is 'where each session reports'`.execute(db)
    await sql`comment on column reports.routes.callback_url is 'the key''s callback'`.execute(db)
    await sql`create view reports.route_count as select count(*) as routes from reports.routes`.execute(db)
    await sql`create materialized view reports.route_sessions as select session_id from public.webhook_sessions`.execute(db)
    await sql`create unique index route_sessions_id on reports.route_sessions (session_id)`.execute(db)
    for (const relation of ['routes', 'route_count', 'route_sessions']) {
      const kind = sql.raw(relation === 'route_sessions' ? 'materialized view' : 'view')
      await sql`alter ${kind} ${sql.id('reports', relation)} owner to ${sql.id(owner)}`.execute(db)
      await sql`grant select on ${sql.id('reports', relation)} to ${sql.id(reader)}`.execute(db)
    }
    await sql`create table reports.notes (session_id uuid not null references public.webhook_sessions (session_id), note text)`.execute(db)
    await sql`insert into reports.notes values (${sessions[0]}, 'a note')`.execute(db)
    await sql`grant select on public.webhook_sessions to ${sql.id(reader)}`.execute(db)
    await sql`grant update (active) on public.webhook_sessions to ${sql.id(reader)}`.execute(db)
    await sql`grant insert (session_id) on reports.routes to ${sql.id(reader)}`.execute(db)
    await sql`comment on table public.webhook_sessions is 'each session''s route'`.execute(db)
    await sql`alter table public.webhook_sessions enable row level security`.execute(db)
    await sql`create policy readers_see_active on public.webhook_sessions for select to ${sql.id(reader)} using (active)`.execute(db)
    const before = await describeReports(db)
    t.equal(before.length, 4, 'three views and a table')
    const table = await describeTable(db)
    t.match(table, { comment: "each session's route", rowSecurity: true, policies: /readers_see_active/, columnAcl: /^active / }, 'the table has properties of its own')
    t.match(before.find((r) => r.relation === 'routes'), { columnAcl: /^session_id / }, 'a column grant on a view')
    const routes = await readModelRows(db, 'webhook_sessions')

    await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })

    t.same(await describeReports(db), before, 'each kept as it was: owner, options, privileges, comments, indexes, foreign key')
    t.same(await describeTable(db), table, "the new table has the live one's owner, privileges, comment, row security and policies")
    t.same(await readModelRows(db, 'webhook_sessions'), routes, 'the table swapped in')
    const { rows: [counted] } = await sql<{ routes: number; materialized: number }>`
      select (select routes from reports.route_count)::int as routes, (select count(*) from reports.route_sessions)::int as materialized`.execute(db)
    t.same(counted, { routes: 2, materialized: 2 }, 'the views read the new table; the materialized view holds its rows')
    await t.rejects(sql`insert into reports.notes values (gen_random_uuid(), 'no such session')`.execute(db), /foreign key/, 'the foreign key holds on the new table')
  })

  t.test(`a rebuild that would drop what it cannot make again names it and refuses, on ${backend.name}`, async (t) => {
    const { storage, db, store } = await outboxOfOneSession(t, backend)

    await sql`create schema reports`.execute(db)
    await sql`create view reports.routes as select session_id, callback_url from public.webhook_sessions`.execute(db)
    await sql`create rule routes_read_only as on insert to reports.routes do instead nothing`.execute(db)
    await sql`create function reports.route_of(route public.webhook_sessions) returns text language sql begin atomic select route.callback_url; end`.execute(db)
    const live = await tableOid(db)

    const refused = await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    )
    t.type(refused, RebuildWouldDropError, 'the rebuild refuses')
    t.same(
      (refused as RebuildWouldDropError).objects,
      ['function reports.route_of(public.webhook_sessions)', 'rule routes_read_only on view reports.routes'],
      'naming each object it would drop',
    )
    t.equal(await tableOid(db), live, 'the live table untouched')
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${SHADOW_SCHEMA}`.execute(db)
    t.equal(rows[0]!.n, 0, 'nothing built')

    await sql`drop rule routes_read_only on reports.routes`.execute(db)
    await sql`drop function reports.route_of`.execute(db)
    await rebuildProjections(storage, store, [webhookOutboxProjection], { concurrency: 1 })
    t.not(await tableOid(db), live, 'without them, the rebuild swaps')
  })

  t.test(`what appears on the tables while a rebuild runs fails its swap, the live tables kept, on ${backend.name}`, async (t) => {
    const { storage, db, store } = await outboxOfOneSession(t, backend)
    const routes = await readModelRows(db, 'webhook_sessions')
    const live = await tableOid(db)

    const replay = outboxGate()
    const rebuilding = rebuildProjections(storage, store, [replay.projection], { concurrency: 1 })
    await waitUntil(async () => replay.reached(), 'the rebuild is replaying')
    await sql`create view routes as select session_id from public.webhook_sessions`.execute(db)
    await sql`create rule routes_read_only as on insert to routes do instead nothing`.execute(db)
    replay.open()
    await t.rejects(rebuilding, /would drop .*: rule routes_read_only on view public\.routes\./, 'the swap fails, naming what stands in its way')
    t.equal(await tableOid(db), live, 'the live table kept')
    t.same(await readModelRows(db, 'webhook_sessions'), routes, 'with its rows')
  })
}
