import type { SessionEvent } from '../domain/session.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { DbOrTrx } from '../store/database.js'

/** A wait's timer: it fires a turn for the session at `due_at` unless the wait ended before. */
export interface Timer {
  sessionId: string
  nodeId: string
  until: string
}

/** The timers the turns of a batch set: each turn that ends waiting for an outside event until a time. */
export function timersSet(batch: readonly RecordedEvent[]): Timer[] {
  const timers: Timer[] = []
  for (const recorded of batch) {
    const event = recorded as unknown as SessionEvent
    if (event.type !== 'TurnCompleted' || event.data.output.status !== 'active') continue
    const waiting = event.data.output.state.waitingAt
    if (waiting?.until !== undefined) timers.push({ sessionId: event.data.sessionId, nodeId: waiting.nodeId, until: waiting.until })
  }
  return timers
}

/**
 * Keeps the timers where the sweeper finds them by due time; setting one twice keeps one. A timer
 * whose wait ends first stays until due, and its firing then changes nothing.
 */
export async function scheduleTimers(db: DbOrTrx, timers: readonly Timer[]): Promise<void> {
  if (timers.length === 0) return
  await db
    .insertInto('session_timers')
    .values(timers.map((timer) => ({ session_id: timer.sessionId, node_id: timer.nodeId, due_at: timer.until })))
    .onConflict((conflict) => conflict.doNothing())
    .execute()
}

/** Timers due at `now`, oldest first, a bounded batch. */
export async function dueTimers(db: DbOrTrx, now: Date, limit: number): Promise<Timer[]> {
  const rows = await db.selectFrom('session_timers').selectAll().where('due_at', '<=', now).orderBy('due_at').limit(limit).execute()
  return rows.map((row) => ({ sessionId: row.session_id, nodeId: row.node_id, until: new Date(row.due_at).toISOString() }))
}

export async function dropTimer(db: DbOrTrx, timer: Timer): Promise<void> {
  await db.deleteFrom('session_timers').where('session_id', '=', timer.sessionId).where('node_id', '=', timer.nodeId).where('due_at', '=', new Date(timer.until)).execute()
}
