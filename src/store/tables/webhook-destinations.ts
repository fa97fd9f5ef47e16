import type { Timestamp } from './columns.js'

export const DESTINATION_STATES = ['healthy', 'failing'] as const
export type DestinationState = (typeof DESTINATION_STATES)[number]

/** A destination that failed at least once: its health, shared by every dispatcher. */
export interface WebhookDestinationsTable {
  workspace_id: string
  destination: string
  organization_id: string
  state: DestinationState
  consecutive_failures: number
  failing_since: Timestamp | null
  last_error: string | null
  last_failure_at: Timestamp | null
  /** Probes that failed since the destination became failing: the place in the probe schedule. */
  probes: number
  next_probe_at: Timestamp | null
  /** Set while a probe attempt is in flight: no other attempt goes to a failing destination meanwhile. */
  probe_until: Timestamp | null
  updated_at: Timestamp
}
