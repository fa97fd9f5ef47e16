import { sql, type Transaction } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import type { Database, DbOrTrx } from '../store/database.js'
import { ROWS_PER_STATEMENT, defineProjection, inChunks, type TypedFold } from './projection.js'

interface Transfer {
  session_id: string
  timestamp_micros: string
  target_type: string
  target_id: string
  node_id: string | null
}

/** Every transfer the fold's turns asked for, written in one statement. */
class TransfersFold implements TypedFold<SessionEvent> {
  private readonly rows: Transfer[] = []

  get rowsHeld(): number {
    return this.rows.length
  }

  async add(_db: DbOrTrx, events: readonly { event: SessionEvent }[]): Promise<void> {
    for (const { event } of events) {
      if (event.type !== 'TurnCompleted') continue
      const { sessionId, output } = event.data
      const nodeId = output.visited?.at(-1) ?? null
      for (const fn of output.functions) {
        if (fn.type === 'transfer') this.rows.push({ session_id: sessionId, timestamp_micros: String(fn.timestamp), target_type: fn.targetType, target_id: fn.targetId, node_id: nodeId })
      }
    }
  }

  async write(trx: Transaction<Database>): Promise<void> {
    // Microseconds since the epoch, exactly: timestamptz keeps microseconds.
    await inChunks(this.rows, ROWS_PER_STATEMENT, (rows) => sql`
      insert into analytics_transfers (session_id, timestamp_micros, target_type, target_id, node_id, transferred_at)
      select v.session_id, v.timestamp_micros, v.target_type, v.target_id, v.node_id, timestamptz 'epoch' + v.timestamp_micros * interval '1 microsecond'
      from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
        as v(session_id uuid, timestamp_micros bigint, target_type text, target_id text, node_id text)
      on conflict (session_id, timestamp_micros) do nothing`.execute(trx))
  }
}

/**
 * Analytics of transfers (docs/analytics.md): each transfer a turn asked for, to a sector or an
 * agent, with the node the turn ended at. The workspace and flow come from `analytics_sessions`.
 */
export const analyticsTransfersProjection = defineProjection<SessionEvent>({
  name: 'analytics-transfers',
  streamPrefixes: ['session-'],
  tables: ['analytics_transfers'],
  eventTypes: ['TurnCompleted'],
  fold: () => new TransfersFold(),
})
