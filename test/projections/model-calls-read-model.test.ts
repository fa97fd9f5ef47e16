import { randomUUID } from 'node:crypto'
import t from 'tap'
import { session, sessionStream, type SessionEvent } from '../../src/domain/session.js'
import type { ModelCall, TurnOutput } from '../../src/domain/turn.js'
import { analyticsModelCallsProjection } from '../../src/projections/analytics-model-calls.js'
import { projectionSpec } from '../helpers/projection-spec.js'
import { recordedSessionEvent } from '../helpers/recorded-session-events.js'
import { pgliteBackend } from '../helpers/storage.js'

const sessionId = '01a20247-0000-7000-8000-000000000101'
const other = '01a20247-0000-7000-8000-000000000102'
const connectionId = '01a20247-0000-7000-8000-000000000201'
const first = '01a20247-0000-7000-8000-000000000301'
const second = '01a20247-0000-7000-8000-000000000302'

const call = (model: string, promptTokens: number, completionTokens: number, nodeId = 'answer'): ModelCall => ({ nodeId, connectionId, model, promptTokens, completionTokens, durationMs: 900 })

const output = (modelCalls?: ModelCall[]): TurnOutput => ({
  messages: [],
  functions: [],
  kanban: [],
  variables: {},
  warnings: [],
  visited: ['ask', 'answer'],
  status: 'active',
  state: { waitingAt: null, variables: {}, lastTimestampMicros: 0, card: null },
  ...(modelCalls && { modelCalls }),
})

const turn = (id: string, messageId: string, completedAt: string, modelCalls?: ModelCall[]): SessionEvent => ({
  type: 'TurnCompleted',
  data: { sessionId: id, messageId, completedAt, output: output(modelCalls) },
})

t.test('the model calls read model', async (t) => {
  const { given } = projectionSpec(t, analyticsModelCallsProjection, { streamOf: (event: SessionEvent) => sessionStream(event.data.sessionId), schemas: session.eventSchemas })

  await given(turn(sessionId, first, '2026-03-08T10:02:00.000Z')).then({ analytics_model_calls: [] }, 'a turn without model calls writes no row')
  await given(turn(sessionId, first, '2026-03-08T10:02:00.000Z', [call('small', 120, 30), call('large', 400, 80, 'route'), call('small', 90, 10)])).then(
    {
      analytics_model_calls: [
        { session_id: sessionId, message_id: first, model: 'small', called_at: '2026-03-08T10:02:00.000Z', calls: 2, prompt_tokens: 210, completion_tokens: 40 },
        { session_id: sessionId, message_id: first, model: 'large', called_at: '2026-03-08T10:02:00.000Z', calls: 1, prompt_tokens: 400, completion_tokens: 80 },
      ],
    },
    "a turn's calls are summed per model, whichever step made them, at the time the turn completed",
  )
  await given(
    turn(sessionId, first, '2026-03-08T23:59:00.000Z', [call('small', 100, 20)]),
    turn(sessionId, second, '2026-03-09T00:01:00.000Z', [call('small', 50, 5)]),
    turn(other, first, '2026-03-09T00:02:00.000Z', [call('small', 7, 1)]),
  ).then(
    {
      analytics_model_calls: [
        { session_id: sessionId, message_id: first, model: 'small', calls: 1, prompt_tokens: 100, completion_tokens: 20 },
        { session_id: sessionId, message_id: second, model: 'small', calls: 1, prompt_tokens: 50, completion_tokens: 5 },
        { session_id: other, message_id: first, model: 'small', calls: 1, prompt_tokens: 7, completion_tokens: 1 },
      ],
    },
    'each turn of each session is a row of its own',
  )
})

t.test("a preview's turn writes no row", async (t) => {
  const { db } = await pgliteBackend.open(t)
  const previewId = randomUUID()
  const previewTurn = { ...recordedSessionEvent('TurnCompleted', { sessionId: previewId, messageId: randomUUID(), completedAt: '2026-03-08T10:00:00.000Z', output: output([call('small', 10, 2)]) }), metadata: { preview: true } }
  const realTurn = recordedSessionEvent('TurnCompleted', { sessionId, messageId: randomUUID(), completedAt: '2026-03-08T10:00:00.000Z', output: output([call('small', 10, 2)]) })
  await db.transaction().execute(async (trx) => {
    await analyticsModelCallsProjection.apply(trx, previewTurn)
    await analyticsModelCallsProjection.apply(trx, realTurn)
  })
  const rows = await db.selectFrom('analytics_model_calls').select(['session_id', 'calls']).execute()
  t.same(rows, [{ session_id: sessionId, calls: 1 }], "only the published flow's session has its calls")
})
