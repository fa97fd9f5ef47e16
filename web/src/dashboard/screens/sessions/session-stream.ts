import { useEffect, useRef, useState } from 'react'
import { followEventStream } from '../../../shared/event-stream'
import { ApiError, api } from '../../api'

/** Whether the page follows the session as it happens. */
export type Following = 'off' | 'live' | 'reconnecting'

/** Turns that arrive together (those recorded before the stream opened come at once) load the page once. */
const GATHER_MS = 150

/**
 * Follows an active session's stream (GET /v1/sessions/{id}/stream, docs/session-streams.md) with
 * the dashboard's cookie and workspace: `onChange` runs after each turn and at the end, so the page
 * loads what the turn recorded. The same reader as the editor's test panel, so a dropped
 * connection resumes after the last turn it had.
 */
export function useSessionStream(sessionId: string, active: boolean, onChange: () => void): Following {
  const [following, setFollowing] = useState<Following>('off')
  const changed = useRef(onChange)
  changed.current = onChange

  useEffect(() => {
    if (!active) return
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const soon = () => {
      timer ??= setTimeout(() => {
        timer = undefined
        changed.current()
      }, GATHER_MS)
    }
    void followEventStream(
      async (lastEventId, signal) => {
        const { response } = await api.GET('/v1/sessions/{sessionId}/stream', {
          params: { path: { sessionId }, header: lastEventId === undefined ? {} : { 'last-event-id': lastEventId } },
          parseAs: 'stream',
          signal,
        })
        if (!response.ok || !response.body) throw new ApiError(response.status, `HTTP ${response.status}`)
        setFollowing('live')
        return response.body
      },
      controller.signal,
      {
        onEvent: (event) => {
          if (event.event === 'turn' || event.event === 'end') soon()
        },
        onReconnecting: () => setFollowing('reconnecting'),
        onStopped: () => setFollowing('off'),
      },
    )
    return () => {
      controller.abort()
      clearTimeout(timer)
      setFollowing('off')
    }
  }, [sessionId, active])

  return following
}
