import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { session, sessionStream } from '../../src/domain/session.js'
import type { PostgresEventStore } from '../../src/eventstore/postgres.js'
import type { Database } from '../../src/store/database.js'

/** Session starts and turns appended by hand, and the webhook deliveries the outbox made of them. */
export function sessionsOn(store: PostgresEventStore, db: Kysely<Database>) {
  const scope = { workspaceId: randomUUID(), organizationId: randomUUID() }
  const now = () => new Date().toISOString()
  const startSession = async () => {
    const sessionId = randomUUID()
    const [started] = session.decide(
      {
        type: 'StartSession',
        data: { sessionId, ...scope, flowId: randomUUID(), flowVersion: 1, variables: {}, externalId: null, apiKeyId: randomUUID(), callbackUrl: 'https://hooks.example.test/', ttlSeconds: 600, messageId: randomUUID(), now: now() },
      },
      session.initialState,
    )
    await store.append(sessionStream(sessionId), [{ id: randomUUID(), type: started!.type, data: started!.data, metadata: scope }], { expectedRevision: 'no_stream' })
    return sessionId
  }
  const say = async (sessionId: string, body: string) => {
    const output = {
      messages: [{ type: 'text' as const, text: { body }, nodeId: 'say' }],
      functions: [],
      kanban: [],
      variables: {},
      warnings: [],
      visited: ['say'],
      status: 'active' as const,
      state: { waitingAt: null, variables: {}, lastTimestampMicros: 0, card: null },
    }
    await store.append(sessionStream(sessionId), [{ id: randomUUID(), type: 'TurnCompleted', data: { sessionId, messageId: randomUUID(), output, completedAt: now() }, metadata: scope }], { expectedRevision: 'any' })
  }
  const deliveries = async () => {
    const rows = await db.selectFrom('webhook_deliveries').select(['session_id', (eb) => eb.fn.countAll<string>().as('count')]).groupBy('session_id').execute()
    return Object.fromEntries(rows.map((row) => [row.session_id, Number(row.count)]))
  }

  return { startSession, say, deliveries }
}
