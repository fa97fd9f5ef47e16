import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { applyAll } from '../../src/projections/projection.js'
import { sessionLogsProjection } from '../../src/projections/session-logs.js'
import { recordedSessionEvent, recordedSessionStart } from '../helpers/recorded-session-events.js'
import { pgliteBackend } from '../helpers/storage.js'

// The session log's fold merges messages and turns per session; whatever the mix, a batch must
// leave exactly the rows that the events folded one at a time leave.

const at = (second: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, second)).toISOString()
const started = (sessionId: string, second: number) => recordedSessionStart(sessionId, at(second), at(second + 30))
const message = (sessionId: string, second: number) => recordedSessionEvent('MessageReceived', { sessionId, expiresAt: at(second + 30) })
const turn = (sessionId: string, second: number, warnings: number, status: 'active' | 'completed' | 'error') =>
  recordedSessionEvent('TurnCompleted', { sessionId, completedAt: at(second), output: { status, warnings: Array.from({ length: warnings }, () => 'w') } })
const expired = (sessionId: string, second: number) => recordedSessionEvent('SessionExpired', { sessionId, expiredAt: at(second) })

t.test('a batch leaves the rows that event-by-event application leaves', async (t) => {
  const storage = await pgliteBackend.open(t)
  const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  const events = [
    started(a, 1), started(b, 1), turn(a, 2, 1, 'active'), message(a, 3), turn(b, 3, 0, 'active'),
    message(a, 4), turn(a, 5, 2, 'active'), started(c, 5), message(b, 6), turn(b, 7, 1, 'completed'),
    message(c, 8), turn(c, 9, 0, 'active'),
    // Expired after its last turn was merged: the expiry must see the merged state first.
    expired(c, 10), message(a, 11), turn(a, 12, 0, 'error'), started(d, 12), expired(d, 13),
    // A message after an expiry moves nothing it must not.
    message(d, 14),
  ]
  const rows = () => storage.db.selectFrom('session_logs').selectAll().orderBy('id').execute()

  await storage.db.transaction().execute(async (trx) => {
    for (const event of events) await sessionLogsProjection.apply(trx, event)
  })
  const oneByOne = await rows()
  await sql`truncate session_logs`.execute(storage.db)
  await storage.db.transaction().execute((trx) => applyAll(trx, sessionLogsProjection, events))
  const batched = await rows()

  t.equal(oneByOne.length, 4)
  t.same(batched, oneByOne, 'the same rows')
  t.same(
    Object.fromEntries(batched.map((row) => [row.id, [row.status, row.warnings]])),
    { [a]: ['error', 3], [b]: ['completed', 1], [c]: ['timeout', 0], [d]: ['timeout', 0] },
    'statuses and warnings as the events say',
  )
})
