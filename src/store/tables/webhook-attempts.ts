import type { Timestamp } from './columns.js'

export interface WebhookAttemptsTable {
  delivery_id: string
  attempt: number
  attempted_at: Timestamp
  status_code: number | null
  error: string | null
  duration_ms: number
  response_body: string | null
  response_truncated: boolean
}
