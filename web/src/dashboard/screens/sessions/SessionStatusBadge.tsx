import { useT } from '../../i18n'
import type { LogEntry, SessionDetail } from './api-types'

type Status = LogEntry['status'] | SessionDetail['status']

const TONES: Partial<Record<Status, string>> = { completed: 'ok', error: 'error', timeout: 'warn' }

/** A session's status, in its log or its detail, as a badge coloured by how it ended. */
export function SessionStatusBadge({ status }: { status: Status }) {
  const t = useT()
  const tone = TONES[status]
  return <span className={tone ? `badge status-badge ${tone}` : 'badge status-badge'}>{t(`sessions.status.${status}`)}</span>
}
