import type { paths } from '../../api'

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never

export type LogEntry = Json<paths['/v1/sessions/logs']['get']['responses'][200]>['content'][number]
export type SessionDetail = Json<paths['/v1/sessions/{sessionId}']['get']['responses'][200]>
export type Transcript = Json<paths['/v1/sessions/{sessionId}/transcript']['get']['responses'][200]>
export type TranscriptEntry = Transcript['entries'][number]
export type SessionEvent = Json<paths['/v1/sessions/{sessionId}/events']['get']['responses'][200]>['content'][number]

export type Inbound = Extract<TranscriptEntry, { kind: 'inbound' }>['message']
export type Outgoing = Extract<TranscriptEntry, { kind: 'outbound' }>['message']
export type MediaKind = Extract<Outgoing, { type: 'media' }>['media']['type']

/** The filters of GET /v1/sessions/logs, as the API names their values. */
export const LOG_STATUSES = ['running', 'completed', 'timeout', 'error'] as const
export const DATE_RANGES = ['today', 'last7days', 'last15days', 'last30days'] as const
export const LOG_ORDER_COLUMNS = ['startedAt', 'expiresAt', 'finishedAt', 'status', 'warnings', 'externalId'] as const
export const DIRECTIONS = ['ASC', 'DESC'] as const
export const PAGE_SIZES = ['10', '25', '50', '100'] as const

/** Badge class of a session status (log or detail). */
export function statusTone(status: string): string {
  if (status === 'completed') return 'badge status-badge ok'
  if (status === 'error') return 'badge status-badge error'
  if (status === 'timeout') return 'badge status-badge warn'
  return 'badge status-badge'
}

/** An id short enough for a table: its end, since ids made in the same moment share their beginning (UUIDv7). */
export const shortId = (id: string): string => id.slice(-8)
