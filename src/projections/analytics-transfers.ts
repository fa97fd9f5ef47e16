import { sql, type Transaction } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import type { Database } from '../store/database.js'
import { defineProjection } from './projection.js'

/**
 * Analytics of transfers (docs/analytics.md): each transfer a turn asked for, to a sector or an
 * agent, with the node the turn ended at. The workspace and flow come from `analytics_sessions`.
 */
export const analyticsTransfersProjection = defineProjection<SessionEvent>({
  name: 'analytics-transfers',
  streamPrefixes: ['session-'],
  tables: ['analytics_transfers'],
  eventTypes: ['TurnCompleted'],
  async apply(trx, event) {
    await insertTransfers(trx, [{ event }])
  },
  async applyBatch(trx, events) {
    await insertTransfers(trx, events)
  },
})

/** Every transfer the batch's turns asked for, in one statement. */
async function insertTransfers(trx: Transaction<Database>, events: readonly { event: SessionEvent }[]): Promise<void> {
  const rows = events.flatMap(({ event }) => {
    if (event.type !== 'TurnCompleted') return []
    const { sessionId, output } = event.data
    const nodeId = output.visited?.at(-1) ?? null
    return output.functions.flatMap((fn) =>
      fn.type === 'transfer' ? [{ session_id: sessionId, timestamp_micros: String(fn.timestamp), target_type: fn.targetType, target_id: fn.targetId, node_id: nodeId }] : [],
    )
  })
  if (rows.length === 0) return
  // Microseconds since the epoch, exactly: timestamptz keeps microseconds.
  await sql`
    insert into analytics_transfers (session_id, timestamp_micros, target_type, target_id, node_id, transferred_at)
    select v.session_id, v.timestamp_micros, v.target_type, v.target_id, v.node_id, timestamptz 'epoch' + v.timestamp_micros * interval '1 microsecond'
    from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
      as v(session_id uuid, timestamp_micros bigint, target_type text, target_id text, node_id text)
    on conflict (session_id, timestamp_micros) do nothing`.execute(trx)
}
