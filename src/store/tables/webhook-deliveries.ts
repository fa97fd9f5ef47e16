import type { ColumnType, Generated } from 'kysely'
import type { Int8, Timestamp } from './columns.js'

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead', 'skipped'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export interface WebhookDeliveriesTable {
  /** The `webhook-id`: derived from the source event, the same on every attempt. */
  id: string
  organization_id: string
  workspace_id: string
  session_id: string
  message_id: string
  api_key_id: string
  callback_url: string | null
  /** The exact JSON that is signed and sent. */
  body: string
  event_ids: ColumnType<string[], string, string>
  /** Global position of the source event: the order of a session's deliveries. */
  source_commit: Int8
  source_prepare: Int8
  status: DeliveryStatus
  attempt_count: Generated<number>
  /** Attempts since the delivery was (re)queued: the place in the retry schedule. */
  round_attempts: Generated<number>
  /** Null on a fresh row: due the first delay of the schedule after `created_at`. */
  next_attempt_at: Timestamp | null
  lease_token: string | null
  lease_until: Timestamp | null
  last_error: string | null
  delivered_at: Timestamp | null
  created_at: Timestamp
  /** The callback URL's origin (lower case): with the workspace, the destination whose fair share the delivery takes. */
  destination: string | null
}
