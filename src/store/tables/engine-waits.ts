import type { Timestamp } from './columns.js'

/** A call outside an engine started for a session's turn and has not recorded the answer of (src/engine/outside-calls.ts). */
export interface PendingCallsTable {
  session_id: string
  message_id: string
  call_index: number
  started_at: Timestamp
}

/** The timer of a session's wait for an outside event, due at `due_at` (src/engine/timers.ts). */
export interface SessionTimersTable {
  session_id: string
  node_id: string
  due_at: Timestamp
}
