import { sql } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
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
    if (event.type !== 'TurnCompleted') return
    const { sessionId, output } = event.data
    const transfers = output.functions.flatMap((fn) => (fn.type === 'transfer' ? [fn] : []))
    if (transfers.length === 0) return
    const nodeId = output.visited?.at(-1) ?? null
    await trx
      .insertInto('analytics_transfers')
      .values(
        transfers.map((fn) => ({
          session_id: sessionId,
          timestamp_micros: String(fn.timestamp),
          target_type: fn.targetType,
          target_id: fn.targetId,
          node_id: nodeId,
          // Microseconds since the epoch, exactly: timestamptz keeps microseconds.
          transferred_at: sql<Date>`timestamptz 'epoch' + ${String(fn.timestamp)}::bigint * interval '1 microsecond'`,
        })),
      )
      .onConflict((oc) => oc.columns(['session_id', 'timestamp_micros']).doNothing())
      .execute()
  },
})
