import type { Int8 } from './columns.js'

export interface StreamsTable {
  stream_id: string
  revision: Int8
}
