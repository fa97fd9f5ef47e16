import type { Timestamp } from './columns.js'

/** The model calls a turn's AI steps made, per model (migration 0035). */
export interface AnalyticsModelCallsTable {
  session_id: string
  /** The trigger the turn answered: one turn per trigger of its session. */
  message_id: string
  model: string
  /** When the turn completed. */
  called_at: Timestamp
  calls: number
  prompt_tokens: number
  completion_tokens: number
}
