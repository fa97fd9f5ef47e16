import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import t from 'tap'
import * as countEveryAttempt from '../../migrations/0019_count_every_webhook_attempt.js'
import type { Database } from '../../src/store/database.js'
import { claimDueDeliveries, recordAttempts, type AttemptRecord, type ClaimedDelivery } from '../../src/webhooks/deliveries.js'
import { pendingDelivery } from '../helpers/deliveries.js'
import { reachableBackends } from '../helpers/storage.js'

const now = new Date('2026-11-24T12:00:00.000Z')
const attemptAt = (seconds: number, statusCode: number | null, error: string | null = null): AttemptRecord => ({
  attemptedAt: new Date(now.getTime() + seconds * 1000),
  statusCode,
  error,
  durationMs: 5,
  responseBody: statusCode === null ? null : `answer ${statusCode}`,
  responseTruncated: false,
})

/** Pending deliveries, each of a session of its own, so all are due at once. */
const insertDeliveries = (db: Kysely<Database>, ids: string[]) =>
  db
    .insertInto('webhook_deliveries')
    .values(
      ids.map((id, index) => pendingDelivery({ id, source_prepare: String(index + 1), created_at: now })),
    )
    .execute()

const claimAll = (db: Kysely<Database>) => claimDueDeliveries(db, { now, limit: 100, leaseMs: 15_000, firstDelaySeconds: 0 })

for (const backend of reachableBackends) {
  t.test(`attempts recorded together on ${backend.name}`, async (t) => {
    const { db } = await backend.open(t)
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    await insertDeliveries(db, ids)
    const claimed = new Map((await claimAll(db)).map((delivery) => [delivery.id, delivery]))
    t.equal(claimed.size, 4, 'all four claimed')
    const [delivered, failed, dead, stolen] = ids.map((id) => claimed.get(id)!)
    // Another dispatcher holds the fourth now (its lease ran out and was taken again).
    const thief: ClaimedDelivery = { ...stolen!, leaseToken: randomUUID() }
    await db.updateTable('webhook_deliveries').set({ lease_token: thief.leaseToken }).where('id', '=', stolen!.id).execute()

    await recordAttempts(db, [])
    await recordAttempts(db, [
      { delivery: delivered!, attempt: attemptAt(1, 200), outcome: { status: 'delivered' } },
      { delivery: failed!, attempt: attemptAt(2, 503), outcome: { status: 'failed', nextAttemptAt: new Date(now.getTime() + 60_000) } },
      { delivery: dead!, attempt: attemptAt(3, null, 'ECONNREFUSED: connect refused'), outcome: { status: 'dead' } },
      { delivery: stolen!, attempt: attemptAt(4, 200), outcome: { status: 'delivered' } },
    ])

    const rows = new Map(
      (await db.selectFrom('webhook_deliveries').selectAll().execute()).map((row) => [row.id, row]),
    )
    const row = (delivery: ClaimedDelivery) => rows.get(delivery.id)!
    t.match(row(delivered!), { status: 'delivered', attempt_count: 1, round_attempts: 1, last_error: null, lease_token: null, next_attempt_at: null })
    t.equal(new Date(row(delivered!).delivered_at!).toISOString(), attemptAt(1, 200).attemptedAt.toISOString(), 'delivered at its attempt')
    t.match(row(failed!), { status: 'failed', attempt_count: 1, last_error: 'HTTP 503', lease_token: null, delivered_at: null })
    t.equal(new Date(row(failed!).next_attempt_at!).toISOString(), '2026-11-24T12:01:00.000Z', 'retried on its schedule')
    t.match(row(dead!), { status: 'dead', attempt_count: 1, last_error: 'ECONNREFUSED: connect refused', lease_token: null })
    t.match(row(stolen!), { status: 'pending', attempt_count: 1, round_attempts: 0, lease_token: thief.leaseToken }, 'a lease lost: the attempt is counted, the state is the new holder’s')

    const attempts = await db.selectFrom('webhook_attempts').selectAll().orderBy('attempted_at').execute()
    t.same(
      attempts.map((a) => [a.delivery_id, a.attempt, a.status_code, a.error, a.response_body]),
      [
        [delivered!.id, 1, 200, null, 'answer 200'],
        [failed!.id, 1, 503, null, 'answer 503'],
        [dead!.id, 1, null, 'ECONNREFUSED: connect refused', null],
        [stolen!.id, 1, 200, null, 'answer 200'],
      ],
      'every attempt is recorded, the lost lease’s too, because it happened',
    )

    // The failed one is due again: its next attempt is numbered after the first.
    const later = new Date(now.getTime() + 120_000)
    const [again] = await claimDueDeliveries(db, { now: later, limit: 10, leaseMs: 15_000, firstDelaySeconds: 0 }).then((all) => all.filter((d) => d.id === failed!.id))
    t.ok(again, 'the failed delivery is claimed again once due')
    await recordAttempts(db, [{ delivery: again!, attempt: attemptAt(130, 204), outcome: { status: 'delivered' } }])
    const numbers = await db.selectFrom('webhook_attempts').select('attempt').where('delivery_id', '=', failed!.id).orderBy('attempt').execute()
    t.same(numbers.map((n) => n.attempt), [1, 2])
    t.match(await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', failed!.id).executeTakeFirstOrThrow(), {
      status: 'delivered',
      attempt_count: 2,
      round_attempts: 2,
      last_error: null,
      next_attempt_at: null,
    })
  })
}

for (const backend of reachableBackends) {
  t.test(`dispatchers recording attempts of the same deliveries at once on ${backend.name}: every attempt and outcome kept`, async (t) => {
    const { db } = await backend.open(t)
    // Two deliveries whose leases ran out and were taken again, so that each of ten dispatchers
    // made an attempt of both; and one delivery of each dispatcher's own.
    const shared: string[] = [randomUUID(), randomUUID()]
    const own: string[] = Array.from({ length: 10 }, () => randomUUID())
    await insertDeliveries(db, [...shared, ...own])
    const claimed = new Map((await claimAll(db)).map((delivery) => [delivery.id, delivery]))
    const holder = (id: string) => claimed.get(id)!
    const formerHolder = (id: string) => ({ id, leaseToken: randomUUID() })

    const outcomes = await Promise.allSettled(
      own.map((ownId, i) => {
        // The last dispatcher holds the shared leases now; the others held them before. Half list
        // the shared deliveries the other way round.
        const sharedMade = shared.map((id) => ({
          delivery: i === own.length - 1 ? holder(id) : formerHolder(id),
          attempt: attemptAt(i, 500),
          outcome: { status: 'failed' as const, nextAttemptAt: new Date(now.getTime() + 60_000) },
        }))
        return recordAttempts(db, [
          ...(i % 2 === 0 ? sharedMade : sharedMade.reverse()),
          { delivery: holder(ownId), attempt: attemptAt(i, 200), outcome: { status: 'delivered' } },
        ])
      }),
    )
    t.equal(outcomes.filter((outcome) => outcome.status === 'rejected').length, 0, 'every batch recorded')

    const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'attempt', 'status_code']).execute()
    for (const id of shared) {
      const numbers = attempts.filter((a) => a.delivery_id === id).map((a) => a.attempt).sort((a, b) => a - b)
      t.same(numbers, Array.from({ length: own.length }, (_, i) => i + 1), 'a shared delivery: one attempt of each dispatcher, numbered 1 to 10')
      t.match(await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow(), {
        status: 'failed',
        attempt_count: own.length,
        round_attempts: 1,
        lease_token: null,
      }, 'a shared delivery: every attempt counted, the one made under the lease moves it along the schedule')
    }
    const delivered = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempt_count']).where('id', 'in', own).execute()
    t.same(delivered.filter((d) => d.status === 'delivered' && d.attempt_count === 1).length, own.length, 'each dispatcher’s own delivery: delivered')
    t.equal(attempts.filter((a) => own.includes(a.delivery_id)).length, own.length, 'with its attempt')
  })
}

for (const backend of reachableBackends) {
  t.test(`an attempt recorded but not counted before every attempt was counted, on ${backend.name}: the next attempt follows it`, async (t) => {
    const { db } = await backend.open(t)
    const id = randomUUID()
    await insertDeliveries(db, [id])
    // The second attempt was made under a lease that had run out: recorded, not counted.
    await db.updateTable('webhook_deliveries').set({ status: 'failed', attempt_count: 1, round_attempts: 1, next_attempt_at: now }).where('id', '=', id).execute()
    await db
      .insertInto('webhook_attempts')
      .values([1, 2].map((attempt) => ({ delivery_id: id, attempt, attempted_at: now, status_code: 500, error: null, duration_ms: 5, response_body: null, response_truncated: false })))
      .execute()

    await countEveryAttempt.up(db)
    const [claimed] = await claimAll(db)
    await recordAttempts(db, [{ delivery: claimed!, attempt: attemptAt(60, 200), outcome: { status: 'delivered' } }])
    const numbers = await db.selectFrom('webhook_attempts').select('attempt').where('delivery_id', '=', id).orderBy('attempt').execute()
    t.same(numbers.map((n) => n.attempt), [1, 2, 3], 'numbered after the last one recorded')
    t.match(await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow(), { status: 'delivered', attempt_count: 3 })
  })
}
