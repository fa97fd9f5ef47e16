import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import { cardsProjection, listCards } from '../../src/projections/cards.js'
import { dateRangeStart, type DateRange } from '../../src/projections/date-range.js'
import { applyAll, type Projection } from '../../src/projections/projection.js'
import { rebuildProjection, type RebuildStorage } from '../../src/projections/rebuild.js'
import { listSessionLogs, sessionLogsProjection, type LogStatus } from '../../src/projections/session-logs.js'
import type { Db } from '../../src/store/database.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { reachableBackends } from '../helpers/storage.js'
import * as listCountsMigration from '../../migrations/0013_list_counts.js'
import * as cardListKeysMigration from '../../migrations/0017_card_list_keys.js'

// The lists' totalElements and card aggregations come from counts kept beside the rows (migration
// 0013) when the filters allow: after every kind of change and after a rebuild, they must equal a
// fresh count over the rows, for every filter.

const ORGANIZATIONS = [randomUUID(), randomUUID()] as const
// The zones make a date range start at a midnight that is not UTC's: -03:00 and +05:30.
const WORKSPACES = [
  { id: randomUUID(), organizationId: ORGANIZATIONS[0], timezone: null },
  { id: randomUUID(), organizationId: ORGANIZATIONS[0], timezone: 'America/Sao_Paulo' },
  { id: randomUUID(), organizationId: ORGANIZATIONS[0], timezone: 'Asia/Kolkata' },
  { id: randomUUID(), organizationId: ORGANIZATIONS[1], timezone: 'Asia/Tokyo' },
]
const NOW = new Date('2026-05-20T02:30:00.000Z')
const PIPELINES = [randomUUID(), randomUUID()] as const
const STAGES = [randomUUID(), randomUUID(), randomUUID()] as const
const FIELDS = { amount: randomUUID(), seats: randomUUID(), name: randomUUID() }
const TAGS = ['vip', 'renewal', 'lead'] as const
const EVERY_WORKSPACE = '00000000-0000-0000-0000-000000000000'

const minutesBefore = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString()

let position = 0n
const recorded = (stream: string, type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: {},
  stream,
  revision: 0n,
  position: { commit: position, prepare: position++ },
  createdAt: NOW.toISOString(),
})

/** Applies events as the runtime does, and keeps them for the store the rebuild reads. */
async function apply(db: Db, projection: Projection, events: RecordedEvent[], log: RecordedEvent[]) {
  await db.transaction().execute((trx) => applyAll(trx, projection, events))
  log.push(...events)
}

async function rebuild(storage: RebuildStorage, store: PostgresEventStore, projection: Projection, events: RecordedEvent[]) {
  for (const event of events) await store.append(event.stream, [{ id: event.id, type: event.type, data: event.data }], { expectedRevision: 'any' })
  await rebuildProjection(storage, store, projection)
}

/** The columns of the logs that the lists filter and order by, in the lists' order (start time, then id). */
async function listedSessionRows(db: Db) {
  const rows = await db.selectFrom('session_logs').select(['id', 'organization_id', 'workspace_id', 'status', 'started_at']).orderBy('started_at', 'asc').orderBy('id', 'asc').execute()
  return rows.map((row) => ({ id: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, status: row.status, startedAt: new Date(row.started_at).toISOString() }))
}

async function checkKeptSessionCounts(t: Test, db: Db, step: string) {
  const kept = await sql<{ key: string; n: string }>`
    select concat_ws('/', organization_id, workspace_id, status) as key, n::text from session_log_counts where n <> 0
    union all select concat_ws('/', organization_id, workspace_id, status, day) as key, n::text from session_log_day_counts where n <> 0
    order by key`.execute(db)
  // The nil workspace stands for the whole organization.
  const fresh = await sql<{ key: string; n: string }>`
    select concat_ws('/', organization_id, workspace_id, status) as key, count(*)::text as n from session_logs group by 1
    union all select concat_ws('/', organization_id, ${EVERY_WORKSPACE}::text, status) as key, count(*)::text from session_logs group by 1
    union all select concat_ws('/', organization_id, workspace_id, status, (started_at at time zone 'UTC')::date) as key, count(*)::text from session_logs group by 1
    union all select concat_ws('/', organization_id, ${EVERY_WORKSPACE}::text, status, (started_at at time zone 'UTC')::date) as key, count(*)::text from session_logs group by 1
    order by key`.execute(db)
  t.same(kept.rows, fresh.rows, `${step}: the kept counts are the rows' counts`)
}

/**
 * The kept counts, then every filter's totalElements and deep pages against the rows. Each filter
 * asks page 0 of size 1 (which counts whenever a row matches) or a page past the end (which always
 * counts), alternating by filter and by `sweep`: over the sweeps every filter is asked at both.
 */
async function checkSessionLogs(t: Test, db: Db, step: string, sweep: number) {
  await checkKeptSessionCounts(t, db, step)
  const rows = await listedSessionRows(db)

  let mismatches = 0
  let checked = 0
  for (const organizationId of ORGANIZATIONS) {
    for (const workspace of [undefined, ...WORKSPACES.filter((w) => w.organizationId === organizationId)]) {
      for (const status of [undefined, 'running', 'completed', 'timeout', 'error'] as (LogStatus | undefined)[]) {
        for (const dateRange of [undefined, 'today', 'last7days', 'last15days', 'last30days'] as (DateRange | undefined)[]) {
          const since = dateRange && dateRangeStart(dateRange, NOW, workspace?.timezone ?? 'UTC').toISOString()
          const expected = rows.filter(
            (row) => row.organizationId === organizationId && (!workspace || row.workspaceId === workspace.id) && (!status || row.status === status) && (!since || row.startedAt >= since),
          ).length
          const page = (checked + sweep) % 2 === 0 ? 0 : 10_000
          const got = await listSessionLogs(db, { organizationId, workspaceId: workspace?.id, status, dateRange, page, size: 1, direction: 'ASC', now: NOW })
          checked++
          if (got.totalElements !== expected) {
            mismatches++
            t.fail(`${step}: ${workspace?.timezone ?? (workspace ? 'UTC workspace' : 'organization')} ${status ?? ''} ${dateRange ?? ''} page ${page}: ${got.totalElements} ≠ ${expected}`)
          }
        }
      }
    }
  }
  t.equal(mismatches, 0, `${step}: totalElements equals a fresh count in all ${checked} filter combinations`)

  // Deep pages by start time skip whole days by the kept day counts: each must still be the slice
  // of the sorted list. Each filter pages oldest or newest first, alternating by filter and by
  // `sweep`, so that over the sweeps every filter pages both ways.
  let pageMismatches = 0
  let pages = 0
  let filters = 0
  for (const organizationId of ORGANIZATIONS) {
    for (const workspace of [undefined, ...WORKSPACES.filter((w) => w.organizationId === organizationId)]) {
      for (const status of [undefined, 'running', 'completed'] as (LogStatus | undefined)[]) {
        const direction = (filters++ + sweep) % 2 === 0 ? 'ASC' : 'DESC'
        const matching = rows.filter((row) => row.organizationId === organizationId && (!workspace || row.workspaceId === workspace.id) && (!status || row.status === status)).map((row) => row.id)
        // Start times are all distinct: newest first is the oldest-first order reversed.
        const expected = direction === 'ASC' ? matching : matching.reverse()
        const size = 7
        for (let page = 1; page <= Math.ceil(expected.length / size); page++) {
          const got = await listSessionLogs(db, { organizationId, workspaceId: workspace?.id, status, page, size, direction, now: NOW })
          pages++
          if (JSON.stringify(got.content.map((e) => e.id)) !== JSON.stringify(expected.slice(page * size, (page + 1) * size))) {
            pageMismatches++
            t.fail(`${step}: ${workspace?.timezone ?? (workspace ? 'UTC workspace' : 'organization')} ${status ?? ''} ${direction} page ${page}`)
          }
        }
      }
    }
  }
  t.equal(pageMismatches, 0, `${step}: all ${pages} deep pages are the slices of the sorted list`)
}

/**
 * After a rebuild or a migration the lists read the rows and the kept counts of an earlier step,
 * whose every filter and deep page `checkSessionLogs` checked: the kept counts must be the rows'
 * counts again, and the rows those of that step.
 */
async function checkSessionLogsUnchanged(t: Test, db: Db, step: string, checked: { step: string; rows: Awaited<ReturnType<typeof listedSessionRows>> }) {
  await checkKeptSessionCounts(t, db, step)
  t.same(await listedSessionRows(db), checked.rows, `${step}: the lists read the same rows as ${checked.step}`)
}

/** The columns of the cards that the lists filter and sum by. */
async function listedCardRows(db: Db) {
  const rows = await db.selectFrom('kanban_cards').select(['id', 'pipeline_id', 'stage_id', 'tags', 'search_text', 'field_values', 'created_at']).orderBy('id').execute()
  return rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() }))
}

async function checkKeptCardTotals(t: Test, db: Db, step: string) {
  const kept = await sql<{ key: string; n: string }>`
    select concat_ws('/', pipeline_id, stage_id, tag) as key, n::text from kanban_card_counts where n <> 0
    union all select concat_ws('/', pipeline_id, stage_id, tag, field_id) as key, trim_scale(total)::text from kanban_card_sums where total <> 0
    order by key`.execute(db)
  const fresh = await sql<{ key: string; n: string }>`
    with keyed as (select c.*, t.tag from kanban_cards c cross join lateral unnest(array['']::text[] || c.tags) as t(tag))
    select concat_ws('/', pipeline_id, stage_id, tag) as key, count(*)::text as n from keyed group by 1
    union all
    select key, n from (
      select concat_ws('/', pipeline_id, stage_id, tag, v.key) as key, sum(v.value::numeric) as total, trim_scale(sum(v.value::numeric))::text as n
      from keyed cross join lateral jsonb_each(field_values) as v where jsonb_typeof(v.value) = 'number' group by 1
    ) as sums where total <> 0
    order by key`.execute(db)
  t.same(kept.rows, fresh.rows, `${step}: the kept totals are the cards' totals`)
}

/**
 * The kept totals, then every filter's totalElements and aggregations against a count and sum of
 * the cards, all counted in one query. The totals do not depend on the page: each filter asks page
 * 0 or a page past the end, alternating by filter and by `sweep`, so that over the sweeps every
 * filter is asked at both.
 */
async function checkCards(t: Test, db: Db, step: string, sweep: number) {
  await checkKeptCardTotals(t, db, step)

  const filters: { pipelineId: string; stageId?: string; tags?: string[]; q?: string; createdAfter?: string }[] = []
  for (const pipelineId of PIPELINES) {
    for (const stageId of [undefined, ...STAGES]) {
      for (const tags of [undefined, ['vip'], ['renewal'], ['vip', 'renewal'], ['nobody']]) {
        for (const other of [{}, { q: 'acme' }, { createdAfter: minutesBefore(600) }]) filters.push({ pipelineId, stageId, tags, ...other })
      }
    }
  }
  const counted = await sql<{ filter: number; n: string; amount: string | null; seats: string | null }>`
    select f.filter, count(c.id)::text as n,
      sum((c.field_values ->> ${FIELDS.amount})::numeric)::text as amount,
      sum((c.field_values ->> ${FIELDS.seats})::numeric)::text as seats
    from (values ${sql.join(
      filters.map(
        (f, i) => sql`(${i}::int, ${f.pipelineId}::uuid, ${f.stageId ?? null}::uuid, ${f.tags ?? null}::text[], ${f.q ?? null}::text, ${f.createdAfter ?? null}::timestamptz)`,
      ),
    )}) as f(filter, pipeline_id, stage_id, tags, q, created_after)
    left join kanban_cards c on c.pipeline_id = f.pipeline_id
      and (f.stage_id is null or c.stage_id = f.stage_id)
      and (f.tags is null or c.tags @> f.tags)
      and (f.q is null or c.search_text ilike '%' || f.q || '%')
      and (f.created_after is null or c.created_at > f.created_after)
    group by f.filter
    order by f.filter`.execute(db)

  const sumFieldIds = [FIELDS.amount, FIELDS.seats]
  let mismatches = 0
  for (const [i, { pipelineId, ...filter }] of filters.entries()) {
    const row = counted.rows[i]!
    const expected = { totalElements: Number(row.n), aggregations: { [FIELDS.amount]: Number(row.amount ?? 0), [FIELDS.seats]: Number(row.seats ?? 0) } }
    const page = (i + sweep) % 2 === 0 ? 0 : 10_000
    const got = await listCards(db, { pipelineId, sumFieldIds, ...filter, page, size: 1 })
    if (got.totalElements !== expected.totalElements || JSON.stringify(got.aggregations) !== JSON.stringify(expected.aggregations)) {
      mismatches++
      t.fail(`${step}: stage ${filter.stageId ?? '-'} tags ${filter.tags?.join(',') ?? '-'} ${assertionMessage({ q: filter.q, createdAfter: filter.createdAfter })} page ${page}`, { found: got, wanted: expected })
    }
  }
  t.equal(mismatches, 0, `${step}: totalElements and aggregations equal a fresh count and sum in all ${filters.length} filter combinations`)
}

/** As {@link checkSessionLogsUnchanged}, for the cards. */
async function checkCardsUnchanged(t: Test, db: Db, step: string, checked: { step: string; rows: Awaited<ReturnType<typeof listedCardRows>> }) {
  await checkKeptCardTotals(t, db, step)
  t.same(await listedCardRows(db), checked.rows, `${step}: the lists read the same cards as ${checked.step}`)
}

for (const backend of reachableBackends) {
  t.test(`kept list counts on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    await db
      .insertInto('workspaces')
      .values(WORKSPACES.map((w, i) => ({ id: w.id, organization_id: w.organizationId, name: `w${i}`, timezone: w.timezone, created_at: NOW })))
      .execute()

    await t.test('session logs', async (t) => {
      const events: RecordedEvent[] = []
      const sessionEvent = (sessionId: string, type: string, data: Record<string, unknown>) => recorded(`session-${sessionId}`, type, { sessionId, ...data })
      // Started every 5h17m over 45 days: every hour of the day, both sides of every zone's midnight.
      const sessions = Array.from({ length: 205 }, (_, i) => {
        const workspace = WORKSPACES[i % WORKSPACES.length]!
        return { id: randomUUID(), workspace, startedAt: minutesBefore(i * 317 - 120) }
      })
      await apply(
        db,
        sessionLogsProjection,
        sessions.map((s) =>
          sessionEvent(s.id, 'SessionStarted', {
            workspaceId: s.workspace.id,
            organizationId: s.workspace.organizationId,
            flowId: randomUUID(),
            flowVersion: 1,
            externalId: null,
            startedAt: s.startedAt,
            expiresAt: minutesBefore(-60),
          }),
        ),
        events,
      )
      await checkSessionLogs(t, db, 'after the starts', 0)

      // Messages and turns in one batch (the merged path), some finishing.
      const turns = sessions.flatMap((s, i) => [
        sessionEvent(s.id, 'MessageReceived', { expiresAt: minutesBefore(-90) }),
        sessionEvent(s.id, 'TurnCompleted', {
          completedAt: minutesBefore(1),
          output: { status: ['active', 'completed', 'error', 'active', 'completed'][i % 5], warnings: i % 7 === 0 ? ['w'] : [] },
        }),
      ])
      await apply(db, sessionLogsProjection, turns, events)
      await checkSessionLogs(t, db, 'after the turns', 1)

      // Expiries: of running sessions (counted as timeout) and of finished ones (nothing changes), event by event.
      const eventByEvent = { ...sessionLogsProjection, applyBatch: undefined }
      for (const s of sessions.filter((_, i) => i % 3 === 0)) await apply(db, eventByEvent, [sessionEvent(s.id, 'SessionExpired', { expiredAt: minutesBefore(0) })], events)
      await checkSessionLogs(t, db, 'after the expiries', 2)
      const checked = { step: 'after the expiries', rows: await listedSessionRows(db) }

      const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
      t.teardown(() => store.close())
      await rebuild(storage, store, sessionLogsProjection, events)
      await checkSessionLogsUnchanged(t, db, 'after a rebuild', checked)
      // The migration counts the rows already there when it runs.
      // 0017 replaced an index of 0013's: it comes off first and back after.
      await cardListKeysMigration.down(db)
      await listCountsMigration.down(db)
      await listCountsMigration.up(db)
      await cardListKeysMigration.up(db)
      await checkSessionLogsUnchanged(t, db, 'after the migration counted the existing rows', checked)
    })

    await t.test('cards', async (t) => {
      const events: RecordedEvent[] = []
      const cardEvent = (cardId: string, type: string, data: Record<string, unknown>) => recorded(`card-${cardId}`, type, { cardId, sessionId: null, ...data })
      const cards = Array.from({ length: 120 }, (_, i) => ({
        id: randomUUID(),
        pipelineId: PIPELINES[i % 7 === 0 ? 1 : 0],
        stageId: STAGES[i % 3]!,
        tags: TAGS.filter((_, k) => (i >> k) % 2 === 1),
        values: {
          ...(i % 4 === 0 ? {} : { [FIELDS.amount]: Math.round(i * 1234.567) / 100 }),
          [FIELDS.seats]: i % 9,
          [FIELDS.name]: i % 5 === 0 ? `Acme ${i}` : `Shop ${i}`,
        },
      }))
      await apply(
        db,
        cardsProjection,
        cards.map((c, i) =>
          cardEvent(c.id, 'CardCreated', { pipelineId: c.pipelineId, workspaceId: WORKSPACES[0]!.id, stageId: c.stageId, values: c.values, tags: c.tags, createdAt: minutesBefore(i * 13) }),
        ),
        events,
      )
      await checkCards(t, db, 'after the creations', 0)

      const updates = cards
        .filter((_, i) => i % 4 === 1)
        .map((c, i) => {
          c.values = { ...c.values, [FIELDS.amount]: 0.1 * i, [FIELDS.seats]: -i }
          if (i % 2 === 0) c.tags = ['vip']
          return cardEvent(c.id, 'CardUpdated', { pipelineId: c.pipelineId, stageId: c.stageId, changedFieldIds: [], tagsChanged: true, values: c.values, tags: c.tags, updatedAt: minutesBefore(0) })
        })
      await apply(db, cardsProjection, updates, events)
      await checkCards(t, db, 'after value and tag changes', 1)

      const moves = cards
        .filter((_, i) => i % 5 === 2)
        .map((c) => {
          const previousStageId = c.stageId
          c.stageId = STAGES[(STAGES.indexOf(c.stageId as (typeof STAGES)[number]) + 1) % 3]!
          return cardEvent(c.id, 'CardStageChanged', { pipelineId: c.pipelineId, stageId: c.stageId, previousStageId, tags: c.tags, movedAt: minutesBefore(0) })
        })
      await apply(db, cardsProjection, moves, events)
      await checkCards(t, db, 'after stage moves', 2)

      const deletions = cards
        .filter((_, i) => i % 6 === 3)
        .map((c) => cardEvent(c.id, 'CardDeleted', { pipelineId: c.pipelineId, stageId: c.stageId, tags: c.tags, deletedAt: minutesBefore(0) }))
      await apply(db, cardsProjection, deletions, events)
      await checkCards(t, db, 'after deletions', 3)

      // A field removed from the pipeline takes its values, and its sums, off every card.
      await apply(
        db,
        cardsProjection,
        [
          recorded(`pipeline-${PIPELINES[0]}`, 'PipelineUpdated', {
            pipelineId: PIPELINES[0],
            workspaceId: WORKSPACES[0]!.id,
            name: 'p',
            stages: [],
            fields: [],
            removedStageIds: [],
            removedFieldIds: [FIELDS.seats],
            updatedAt: minutesBefore(0),
          }),
        ],
        events,
      )
      await checkCards(t, db, 'after a field is removed', 4)
      const checked = { step: 'after a field is removed', rows: await listedCardRows(db) }
      const seats = await db.selectFrom('kanban_card_sums').select(sql<string>`sum(total)`.as('total')).where('pipeline_id', '=', PIPELINES[0]).where('field_id', '=', FIELDS.seats).executeTakeFirstOrThrow()
      t.equal(Number(seats.total ?? 0), 0, 'the removed field sums to nothing')

      const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
      t.teardown(() => store.close())
      await rebuild(storage, store, cardsProjection, events)
      await checkCardsUnchanged(t, db, 'after a rebuild', checked)
      const remaining = await db.selectFrom('kanban_cards').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()
      t.equal(Number(remaining.n), cards.length - deletions.length, 'the rebuild replayed every card')
      // 0017 replaced an index of 0013's: it comes off first and back after.
      await cardListKeysMigration.down(db)
      await listCountsMigration.down(db)
      await listCountsMigration.up(db)
      await cardListKeysMigration.up(db)
      await checkCardsUnchanged(t, db, 'after the migration counted the existing cards', checked)
    })
  })
}
