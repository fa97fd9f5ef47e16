import type { MessageKey } from '../../i18n'
import type { LogEntry, SessionDetail } from './api-types'

/**
 * The four states a session is in, one word each on every screen. The API says `active` on a
 * session and `running` in its log (the spec binds both values); people read one state.
 */
export type SessionState = 'active' | 'completed' | 'timeout' | 'error'

export const sessionStateOf = (status: LogEntry['status'] | SessionDetail['status']): SessionState => (status === 'running' ? 'active' : status)

/** The word for a state in the dashboard's dictionaries. */
export const sessionStateKey = (status: LogEntry['status'] | SessionDetail['status']): MessageKey => `sessions.state.${sessionStateOf(status)}`
