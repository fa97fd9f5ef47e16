import type { Timestamp } from './columns.js'

/** A change of the versions a flow's new sessions start on (migration 0038). */
export interface FlowReleasesTable {
  flow_id: string
  /** The revision of the flow event that made it; the negated version for publishes older than the table. */
  revision: string | number | bigint
  reason: 'publish' | 'rollback' | 'release' | 'promote' | 'halt'
  /** The version a FlowPublished made; null on the rows of release changes. */
  published_version: number | null
  live_version: number
  gradual_version: number | null
  gradual_percent: number | null
  changed_at: Timestamp
}
