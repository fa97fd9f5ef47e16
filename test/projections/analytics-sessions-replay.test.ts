import { randomUUID } from 'node:crypto'
import t from 'tap'
import { analyticsSessionsProjection } from '../../src/projections/analytics-sessions.js'
import { recordedSessionEvent, recordedSessionStart } from '../helpers/recorded-session-events.js'
import { pgliteBackend } from '../helpers/storage.js'

// A session's analytics row is written whole from what the fold holds of it: a start folded on its
// own holds the session as it began, which must not overwrite what its turns have stored since.

t.test('a start applied again leaves the session as its turns left it', async (t) => {
  const { db } = await pgliteBackend.open(t)
  const sessionId = randomUUID()
  const started = recordedSessionStart(sessionId, '2026-11-24T08:00:00.000Z', '2026-11-24T08:30:00.000Z')
  const turn = recordedSessionEvent('TurnCompleted', {
    sessionId,
    messageId: randomUUID(),
    completedAt: '2026-11-24T08:00:05.000Z',
    output: { status: 'active', visited: ['start', 'ask'], warnings: [], functions: [], messages: [] },
  })
  const row = () => db.selectFrom('analytics_sessions').select(['status', 'turns', 'last_node_id']).where('session_id', '=', sessionId).executeTakeFirstOrThrow()
  await db.transaction().execute(async (trx) => {
    await analyticsSessionsProjection.apply(trx, started)
    await analyticsSessionsProjection.apply(trx, turn)
  })
  t.same(await row(), { status: 'running', turns: 1, last_node_id: 'ask' }, 'the turn counted')
  await db.transaction().execute((trx) => analyticsSessionsProjection.apply(trx, started))
  t.same(await row(), { status: 'running', turns: 1, last_node_id: 'ask' }, 'still as the turn left it')
})
