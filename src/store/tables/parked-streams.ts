import type { Generated } from 'kysely'
import type { Int8, Timestamp } from './columns.js'

/** A stream a log processor stopped at after repeated failures on one of its events (parked-streams.ts). */
export interface ParkedStreamsTable {
  processor: string
  stream: string
  event_id: string
  event_type: string
  position_commit: Int8
  position_prepare: Int8
  reason: string
  failures: number
  parked_at: Generated<Timestamp>
}
