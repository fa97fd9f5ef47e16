import { sql, type RawBuilder } from 'kysely'
import { isPreviewTurn, type SessionEvent } from '../domain/session.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { DbOrTrx } from '../store/database.js'
import { InsertOnlyFold, defineProjection } from './projection.js'

interface Transfer {
  session_id: string
  timestamp_micros: string
  target_type: string
  target_id: string
  node_id: string | null
}

/** Every transfer the fold's turns asked for. */
class TransfersFold extends InsertOnlyFold<SessionEvent, Transfer> {
  async add(_db: DbOrTrx, events: readonly { event: SessionEvent; recorded: RecordedEvent }[]): Promise<void> {
    for (const { event, recorded } of events) {
      if (event.type !== 'TurnCompleted' || isPreviewTurn(recorded.metadata)) continue
      const { sessionId, output } = event.data
      const nodeId = output.visited?.at(-1) ?? null
      for (const fn of output.functions) {
        if (fn.type === 'transfer') this.rows.push({ session_id: sessionId, timestamp_micros: String(fn.timestamp), target_type: fn.targetType, target_id: fn.targetId, node_id: nodeId })
      }
    }
  }

  protected insert(rows: readonly Transfer[], onlyIf: RawBuilder<boolean>): RawBuilder<unknown> {
    // Microseconds since the epoch, exactly: timestamptz keeps microseconds.
    return sql`
      insert into analytics_transfers (session_id, timestamp_micros, target_type, target_id, node_id, transferred_at)
      select v.session_id, v.timestamp_micros, v.target_type, v.target_id, v.node_id, timestamptz 'epoch' + v.timestamp_micros * interval '1 microsecond'
      from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
        as v(session_id uuid, timestamp_micros bigint, target_type text, target_id text, node_id text)
      where ${onlyIf}
      on conflict (session_id, timestamp_micros) do nothing`
  }
}

/**
 * Analytics of transfers (docs/analytics.md): each transfer a turn asked for, to a sector or an
 * agent, with the node the turn ended at; a preview's turns never. The workspace and flow come from `analytics_sessions`.
 */
export const analyticsTransfersProjection = defineProjection<SessionEvent>({
  name: 'analytics-transfers',
  streamPrefixes: ['session-'],
  tables: ['analytics_transfers'],
  eventTypes: ['TurnCompleted'],
  fold: () => new TransfersFold(),
})
