import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import t from 'tap'
import type { Database } from '../../src/store/database.js'
import { claimDueDeliveries, recordAttempts, retryDelivery, type AttemptOutcome, type ClaimedDelivery } from '../../src/webhooks/deliveries.js'
import { pendingDelivery } from '../helpers/deliveries.js'
import { reachableBackends } from '../helpers/storage.js'

// A session's webhooks go out one at a time, in the order of its turns: only its oldest open
// delivery is claimed. A dead one is no longer open, so the session's later webhooks go on; a
// manual retry makes it open again, in its own place, ahead of the webhooks that came after it.

const now = new Date('2026-11-28T12:00:00.000Z')
const workspaceId = randomUUID()

/** Pending deliveries of one session, in the order of its turns; their ids in that order. */
async function sessionDeliveries(db: Kysely<Database>, count: number): Promise<string[]> {
  const sessionId = randomUUID()
  const ids = Array.from({ length: count }, () => randomUUID())
  await db
    .insertInto('webhook_deliveries')
    .values(
      ids.map((id, turn) =>
        pendingDelivery({ id, workspace_id: workspaceId, session_id: sessionId, callback_url: 'https://receiver.example.com/hooks', destination: 'https://receiver.example.com', source_prepare: String(turn + 1), created_at: now }),
      ),
    )
    .execute()
  return ids
}

const claim = (db: Kysely<Database>) => claimDueDeliveries(db, { now, limit: 10, leaseMs: 60_000, firstDelaySeconds: 0 })

/** Records one attempt of a claimed delivery, with where it leaves it. */
const attempted = (db: Kysely<Database>, delivery: ClaimedDelivery, statusCode: number | null, outcome: AttemptOutcome) =>
  recordAttempts(db, [{ delivery, attempt: { attemptedAt: now, statusCode, error: statusCode === null ? 'ECONNREFUSED' : null, durationMs: 1, responseBody: null, responseTruncated: false }, outcome }])

for (const backend of reachableBackends) {
  t.test(`a session's webhooks in order on ${backend.name}`, async (t) => {
    const { db } = await backend.open(t)
    const [first, second, third] = await sessionDeliveries(db, 3)
    const names = new Map([[first, 'first'], [second, 'second'], [third, 'third']])
    const claimedNames = async () => {
      const claimed = await claim(db)
      return { claimed, names: claimed.map((delivery) => names.get(delivery.id) ?? delivery.id) }
    }

    const one = await claimedNames()
    t.same(one.names, ['first'], 'the oldest only, while it is open')
    await attempted(db, one.claimed[0]!, null, { status: 'dead' })

    const two = await claimedNames()
    t.same(two.names, ['second'], 'the dead first holds the second back no more')
    await attempted(db, two.claimed[0]!, 503, { status: 'failed', nextAttemptAt: now })

    const retried = await retryDelivery(db, workspaceId, first!, now)
    t.equal(retried.status, 'pending', 'the retry requeues the dead first')
    const three = await claimedNames()
    t.same(three.names, ['first'], 'the retried first goes before the second, though the second is due and was waiting')
    await attempted(db, three.claimed[0]!, 200, { status: 'delivered' })

    const four = await claimedNames()
    t.same(four.names, ['second'], 'then the second')
    await attempted(db, four.claimed[0]!, 200, { status: 'delivered' })
    t.same((await claimedNames()).names, ['third'], 'then the third')
  })
}
