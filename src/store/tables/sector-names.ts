import type { Timestamp } from './columns.js'

/** Written by the sector commands, not a projection (src/commands/sector-names.ts). */
export interface SectorNamesTable {
  workspace_id: string
  name_key: string
  sector_id: string
  reserved_at: Timestamp
}
