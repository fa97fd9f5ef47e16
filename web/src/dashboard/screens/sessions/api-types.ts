import type { JsonOf, paths } from '../../api'

export type LogEntry = JsonOf<paths['/v1/sessions/logs']['get']['responses'][200]>['content'][number]
export type SessionDetail = JsonOf<paths['/v1/sessions/{sessionId}']['get']['responses'][200]>
export type Transcript = JsonOf<paths['/v1/sessions/{sessionId}/transcript']['get']['responses'][200]>
export type TranscriptEntry = Transcript['entries'][number]
export type SessionEvent = JsonOf<paths['/v1/sessions/{sessionId}/events']['get']['responses'][200]>['content'][number]

/** The filters of GET /v1/sessions/logs, as the API names their values. */
export const LOG_STATUSES = ['running', 'completed', 'timeout', 'error'] as const
export const DATE_RANGES = ['today', 'last7days', 'last15days', 'last30days'] as const
export const LOG_ORDER_COLUMNS = ['startedAt', 'expiresAt', 'finishedAt', 'status', 'warnings', 'externalId'] as const
export const DIRECTIONS = ['ASC', 'DESC'] as const
/** Where the dashboard's session and delivery lists start unless asked otherwise: the newest on page one. */
export const NEWEST_FIRST = 'DESC' satisfies (typeof DIRECTIONS)[number]
