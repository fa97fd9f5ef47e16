import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { issueApiKey, revokeApiKey } from '../../src/commands/api-keys.js'
import { createCard, createPipeline, deleteCard, updateCard } from '../../src/commands/kanban.js'
import { createSector } from '../../src/commands/sectors.js'
import { bootstrap, createWorkspace } from '../../src/commands/tenancy.js'
import { comparePositions, type RecordedEvent } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { allProjections } from '../../src/all-projections.js'
import type { Projection } from '../../src/projections/projection.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { readCheckpoint } from '../../src/projections/checkpoints.js'
import { rebuildProjection, rebuildProjections } from '../../src/projections/rebuild.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'
import type { Database } from '../../src/store/database.js'
import { silentLogger } from '../helpers/app.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { reachableBackends } from '../helpers/storage.js'

/** Counts how often each event is applied: any count above 1 is a double application. */
const countingProjection: Projection = {
  name: 'counting',
  streamPrefixes: ['tick-'],
  tables: ['applied_counts' as keyof Database & string],
  async apply(trx, event) {
    await sql`insert into applied_counts (event_id, n) values (${event.id}, 1)
      on conflict (event_id) do update set n = applied_counts.n + 1`.execute(trx)
  },
}

const appendTicks = async (store: PostgresEventStore, count: number) => {
  for (let i = 0; i < count; i++) await store.append(`tick-${i % 7}`, [{ id: randomUUID(), type: 'Ticked', data: { i } }], { expectedRevision: 'any' })
}

for (const backend of reachableBackends) {
  t.test(`projection runtime on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    await sql`create table applied_counts (event_id uuid primary key, n int not null)`.execute(db)
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const counts = async () => {
      const { rows } = await sql<{ total: number; doubled: number }>`
        select count(*)::int as total, count(*) filter (where n <> 1)::int as doubled from applied_counts`.execute(db)
      return rows[0]!
    }
    // Up to 30 s: on Postgres a new event is visible only once every older transaction of the
    // server has ended (the gap rule), and a test file running beside this one may hold one open.
    const waitUntil = async (check: () => Promise<boolean>) => {
      for (const until = Date.now() + 30_000; !(await check()) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 25))
    }

    await t.test('a restarted runtime resumes from its checkpoint: every event applied once', async (t) => {
      await appendTicks(store, 40)
      const first = new ProjectionRuntime(db, store, [countingProjection], silentLogger)
      await first.start()
      await waitUntil(async () => (await counts()).total === 40)
      await first.stop()
      await appendTicks(store, 25)
      const second = new ProjectionRuntime(db, store, [countingProjection], silentLogger)
      await second.start()
      await waitUntil(async () => (await counts()).total === 65)
      await second.stop()
      t.same(await counts(), { total: 65, doubled: 0 })
    })

    await t.test('two runtimes on one database share the work without applying anything twice', async (t) => {
      const a = new ProjectionRuntime(db, store, [countingProjection], silentLogger)
      const b = new ProjectionRuntime(db, store, [countingProjection], silentLogger)
      await Promise.all([a.start(), b.start()])
      await appendTicks(store, 60)
      await waitUntil(async () => (await counts()).total === 125)
      await Promise.all([a.stop(), b.stop()])
      t.same(await counts(), { total: 125, doubled: 0 })
    })

    await t.test('a rebuild beside a live runtime ends with every event applied once', async (t) => {
      const live = new ProjectionRuntime(db, store, [countingProjection], silentLogger)
      await live.start()
      const replayed = rebuildProjection(storage, store, countingProjection)
      await appendTicks(store, 10)
      await replayed
      await waitUntil(async () => (await counts()).total === 135)
      await live.stop()
      t.same(await counts(), { total: 135, doubled: 0 })
    })

    await t.test('a rebuild that a live reader overtakes keeps every event once, and moves the checkpoint where it got', async (t) => {
      // A live reader applies the first tick (and moves the checkpoint) once the rebuild has read past
      // it: the rebuild's tables hold it already, and the swap takes them with the rebuild's position.
      let overtaken = false
      const overtakenProjection: Projection = {
        ...countingProjection,
        fold() {
          const events: RecordedEvent[] = []
          return {
            async add(_shadow, batch) {
              if (!overtaken) {
                overtaken = true
                const [first] = batch
                await db.transaction().execute(async (live) => {
                  await countingProjection.apply(live, first!)
                  await sql`update projection_checkpoints set position_commit = ${String(first!.position.commit)}, position_prepare = ${String(first!.position.prepare)}
                    where projection = ${countingProjection.name}`.execute(live)
                })
              }
              events.push(...batch)
            },
            get rowsHeld() {
              return events.length
            },
            async write(trx) {
              for (const event of events) await countingProjection.apply(trx, event)
            },
          }
        },
      }
      const rebuilt = await rebuildProjections(storage, store, [overtakenProjection], { concurrency: 1, batchSize: 2, windowEvents: 2 })
      t.equal(rebuilt.get(countingProjection.name), 135, 'the rebuild applied the whole log')
      t.same(await counts(), { total: 135, doubled: 0 })
      const [last] = (await store.readAll({ streamPrefixes: ['tick-'], from: { commit: -1n, prepare: -1n }, limit: 1000 })).slice(-1)
      t.same(await readCheckpoint(db, countingProjection.name), last!.position, 'the live checkpoint is where the rebuild got')
    })

    await t.test('a rebuild stops at a failing projection and reports its error', async (t) => {
      const failure = new Error('cannot apply tick 7')
      let seen = 0
      const failing: Projection = {
        name: 'failing',
        streamPrefixes: ['tick-'],
        tables: [],
        async apply() {
          if (++seen === 7) throw failure
        },
      }
      const rebuilt: string[] = []
      // Batches of 2 against a read-ahead of 3: the reader fills the failing projection's feed
      // and must not be left waiting on it.
      const outcome = rebuildProjections(storage, store, [countingProjection, failing], { concurrency: 2, batchSize: 2, onRebuilt: (name) => rebuilt.push(name) })
      await t.rejects(outcome, failure)
      t.same(rebuilt, [], 'no read model is reported rebuilt from part of the log')
      t.same(await counts(), { total: 135, doubled: 0 }, 'the live tables are as they were')
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = 'flowd_rebuild'`.execute(db)
      t.equal(rows[0]!.n, 0, 'and the half-built tables are gone')
    })

    await t.test('waitFor resolves once the read model holds the write, and false when it cannot', async (t) => {
      const runtime = new ProjectionRuntime(db, store, allProjections, silentLogger)
      await runtime.start()
      const ctx = { store, readModels: runtime, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }
      const { workspaceId } = await bootstrap(ctx, { organization: 'Org', workspace: 'W', callbackUrl: null })
      const row = await db.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst()
      t.equal(row?.name, 'W', 'visible right after the command returned')
      await runtime.stop()
      const { position } = await store.append(`workspace-${randomUUID()}`, [{ id: randomUUID(), type: 'Unrelated', data: {} }], { expectedRevision: 'no_stream' })
      t.equal(await runtime.waitFor('workspace-x', position, { timeoutMs: 100 }), false, 'a stopped runtime never reaches it')
      t.equal(
        await runtime.waitFor('session-x', position, { timeoutMs: 100, eventTypes: ['MessageReceived'] }),
        false,
        'a message waits for the session log',
      )
      const outboxOnly = new ProjectionRuntime(db, store, [webhookOutboxProjection], silentLogger)
      t.equal(await outboxOnly.waitFor('session-x', position, { timeoutMs: 100, eventTypes: ['MessageReceived'] }), true, 'but not for the webhook outbox, which makes nothing of it')
      t.equal(await outboxOnly.waitFor('session-x', position, { timeoutMs: 100, eventTypes: ['TurnCompleted'] }), false, 'a turn waits for the outbox')
    })

    await t.test('between batches a read model gathers events, unless a write waits for it; the outbox never gathers', async (t) => {
      const gathering: Projection = { ...countingProjection, name: 'gathering', streamPrefixes: ['gathered-'] }
      const onWebhookPath: Projection = { name: 'on-webhook-path', streamPrefixes: ['gathered-'], tables: [], onWebhookPath: true, apply: async () => {} }
      const runtime = new ProjectionRuntime(db, store, [gathering, onWebhookPath], silentLogger, { gatherMs: 60_000 })
      await runtime.start()
      t.teardown(() => runtime.stop())
      const { total } = await counts()
      const tick = async () => (await store.append(`gathered-${randomUUID()}`, [{ id: randomUUID(), type: 'Ticked', data: {} }], { expectedRevision: 'no_stream' })).position
      t.ok(await runtime.waitFor('gathered-a', await tick(), { timeoutMs: 10_000 }), 'the first event applied')
      t.ok(await runtime.waitFor('gathered-a', await tick(), { timeoutMs: 10_000 }), 'a write that waits ends the gathering')
      const unwaited = await tick()
      await waitUntil(async () => comparePositions(await readCheckpoint(db, onWebhookPath.name), unwaited) >= 0)
      t.ok(comparePositions(await readCheckpoint(db, onWebhookPath.name), unwaited) >= 0, 'the outbox applies the next event with nobody waiting')
      t.equal((await counts()).total, total + 2, 'the read model gathers it for the rest of its 60 s')
      t.ok(await runtime.waitFor('gathered-a', unwaited, { timeoutMs: 10_000 }), 'until a write waits for it')
      t.equal((await counts()).total, total + 3)
      await runtime.stop()

      // More events than a batch holds: the runtime catches up in full batches, none of them gathering.
      await store.append(`gathered-${randomUUID()}`, Array.from({ length: 600 }, () => ({ id: randomUUID(), type: 'Ticked', data: {} })), { expectedRevision: 'no_stream' })
      const catchingUp = new ProjectionRuntime(db, store, [gathering], silentLogger, { gatherMs: 60_000 })
      await catchingUp.start()
      t.teardown(() => catchingUp.stop())
      // Well short of the 60 s a gathering after the first full batch would take.
      await waitUntil(async () => (await counts()).total === total + 3 + 600)
      t.equal((await counts()).total, total + 3 + 600, 'a runtime behind applies full batches one after another')
    })

    await t.test('rebuilding the real read models gives the same rows', async (t) => {
      const runtime = new ProjectionRuntime(db, store, allProjections, silentLogger)
      await runtime.start()
      const ctx = { store, readModels: runtime, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }
      const org = await bootstrap(ctx, { organization: 'Rebuild Org', workspace: 'One', callbackUrl: 'https://hooks.example.com/a' })
      await createWorkspace(ctx, { organizationId: org.organizationId, name: 'Two', timezone: 'Europe/Lisbon' })
      const extra = await issueApiKey(ctx, { organizationId: org.organizationId, workspaceId: org.workspaceId, name: 'extra', role: 'workspace', callbackUrl: null })
      await revokeApiKey(ctx, extra.apiKeyId)
      await runtime.stop()
      const snapshot = async () => ({
        organizations: await db.selectFrom('organizations').selectAll().orderBy('id').execute(),
        workspaces: await db.selectFrom('workspaces').selectAll().orderBy('id').execute(),
        apiKeys: await db.selectFrom('api_keys').selectAll().orderBy('id').execute(),
      })
      const before = await snapshot()
      t.ok(before.apiKeys.some((k) => k.revoked_at !== null), 'the data set includes a revocation')
      // The read models of the rows compared, each rebuilt alone; the next test rebuilds every read model at once.
      const alone = allProjections.filter((projection) => projection.tables.some((table) => ['organizations', 'workspaces', 'api_keys'].includes(table)))
      t.same(alone.flatMap((projection) => projection.tables).sort(), ['api_keys', 'organizations', 'workspaces'], 'the read models of the rows compared')
      for (const projection of alone) await rebuildProjection(storage, store, projection)
      t.same(await snapshot(), before)
    })

    await t.test('rebuilding every read model at once gives the rows the live projections wrote', async (t) => {
      const runtime = new ProjectionRuntime(storage.projectorDb, store, allProjections, silentLogger)
      await runtime.start()
      const ctx = { db, store, readModels: runtime, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }
      const org = await bootstrap(ctx, { organization: 'Concurrent Org', workspace: 'Main', callbackUrl: 'https://hooks.example.com/c' })
      const scope = { organizationId: org.organizationId, workspaceId: org.workspaceId }
      await createSector(ctx, scope, { name: 'Support' })
      const board = await createPipeline(ctx, scope, { name: 'Board', stages: [{ name: 'New' }, { name: 'Done' }] })
      const [first, second] = board.stages.map((stage) => stage.id)
      const cards = []
      for (let i = 0; i < 5; i++) cards.push(await createCard(ctx, scope, board.id, { stageId: first!, tags: [`t${i}`] }))
      await updateCard(ctx, scope, cards[0]!.id, { stageId: second! })
      await updateCard(ctx, scope, cards[1]!.id, { tags: ['changed'] })
      await deleteCard(ctx, scope, cards[2]!.id)
      t.same((await runtime.status(5000)).filter((s) => !s.caughtUp).map((s) => s.name), [], 'the live projections hold every event')
      await runtime.stop()
      const tables = allProjections.flatMap((p) => p.tables)
      const snapshot = async () => Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await readModelRows(db, table)] as const)))
      const live = await snapshot()
      t.equal(live.kanban_cards!.length, 4, 'the data set holds cards, one of them moved and one deleted')
      // Indexes, constraints, triggers and the analytics views over the tables, as PostgreSQL prints them.
      const catalog = async () => ({
        indexes: (await sql<{ d: string }>`select indexdef as d from pg_indexes where tablename = any(${tables}::text[]) order by indexname`.execute(db)).rows.map((r) => r.d),
        constraints: (await sql<{ d: string }>`select conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) as d from pg_constraint
          where conrelid = any(select oid from pg_class where relname = any(${tables}::text[]) and relnamespace = 'public'::regnamespace) order by 1`.execute(db)).rows.map((r) => r.d),
        triggers: (await sql<{ d: string }>`select pg_get_triggerdef(oid) as d from pg_trigger where not tgisinternal
          and tgrelid = any(select oid from pg_class where relname = any(${tables}::text[]) and relnamespace = 'public'::regnamespace) order by tgname`.execute(db)).rows.map((r) => r.d),
        views: (await sql<{ d: string }>`select viewname || ': ' || definition as d from pg_views where schemaname = 'analytics' order by viewname`.execute(db)).rows.map((r) => r.d),
      })
      const catalogBefore = await catalog()
      t.ok(catalogBefore.triggers.length > 0 && catalogBefore.views.length > 0, 'the tables have triggers and views to keep')
      const reported: string[] = []
      const rebuilt = await rebuildProjections(storage, store, allProjections, {
        concurrency: allProjections.length,
        onRebuilt: (name) => reported.push(name),
      })
      t.same([...rebuilt.keys()].sort(), allProjections.map((p) => p.name).sort(), 'every read model rebuilt')
      t.same(reported.sort(), allProjections.map((p) => p.name).sort(), 'each reported once')
      t.same(await snapshot(), live)
      t.same(await catalog(), catalogBefore, 'every read model has its indexes, constraints, triggers and views back, as the migrations made them')
    })
  })
}
