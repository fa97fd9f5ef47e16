import { useT } from '../../i18n'
import type { LogEntry, SessionDetail } from './api-types'
import { sessionStateKey, sessionStateOf, type SessionState } from './session-state'

const TONES: Partial<Record<SessionState, string>> = { completed: 'ok', error: 'error', timeout: 'warn' }

/** A session's state, in its log or its detail, as a badge coloured by how it ended. */
export function SessionStatusBadge({ status }: { status: LogEntry['status'] | SessionDetail['status'] }) {
  const t = useT()
  const tone = TONES[sessionStateOf(status)]
  return <span className={tone ? `badge status-badge ${tone}` : 'badge status-badge'}>{t(sessionStateKey(status))}</span>
}
