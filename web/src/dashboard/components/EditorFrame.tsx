import { useEffect, useRef, useState } from 'react'
import type { EditorMessage } from '../../editor/protocol'
import type { Lang, Theme } from '../../shared/i18n'
import { api, unwrap } from '../api'

/** What the editor last said, for a status line beside it (its unsaved changes go to `onDirty`). */
export type EditorStatus = Exclude<EditorMessage, { type: 'dirty' }> | { type: 'loading' }

/**
 * The embedded editor on `flowId`, signed in by the dashboard itself: on the editor's `ready` (and
 * on `session_expired`), a one-time token from `POST /auth/session/editor-token` for the workspace
 * goes to it as `{type: "auth", ott}`. No OAuth client and no secret: the editor's session lives
 * as long as the dashboard's. Same origin, so messages go to and come from this origin only.
 */
export function EditorFrame({
  workspaceId,
  flowId,
  lang,
  theme,
  title,
  onStatus,
  onDirty,
}: {
  workspaceId: string
  flowId: string
  lang: Lang
  theme: Theme
  /** The iframe's accessible name. */
  title: string
  onStatus?: (status: EditorStatus) => void
  /** Whether the editor's draft has unsaved changes, each time that changes. */
  onDirty?: (dirty: boolean) => void
}) {
  const frame = useRef<HTMLIFrameElement>(null)
  const onStatusRef = useRef(onStatus)
  onStatusRef.current = onStatus
  const onDirtyRef = useRef(onDirty)
  onDirtyRef.current = onDirty
  const [src] = useState(() => `/editor/${lang}/flows/builder/${encodeURIComponent(flowId)}?theme=${theme}`)

  useEffect(() => {
    const origin = window.location.origin
    const signIn = async () => {
      const { ott } = await unwrap(api.POST('/auth/session/editor-token', { body: { workspaceId } }))
      frame.current?.contentWindow?.postMessage({ type: 'auth', ott }, origin)
    }
    const onMessage = (event: MessageEvent) => {
      if (event.source !== frame.current?.contentWindow || event.origin !== origin) return
      const message = event.data as EditorMessage
      if (typeof message !== 'object' || message === null || typeof message.type !== 'string') return
      if (message.type === 'dirty') return onDirtyRef.current?.(message.dirty === true)
      onStatusRef.current?.(message)
      if (message.type === 'ready' || (message.type === 'error' && message.code === 'session_expired')) {
        signIn().catch((error: unknown) =>
          onStatusRef.current?.({ type: 'error', code: 'auth_failed', message: error instanceof Error ? error.message : String(error) }),
        )
      }
    }
    window.addEventListener('message', onMessage)
    onStatusRef.current?.({ type: 'loading' })
    return () => window.removeEventListener('message', onMessage)
  }, [workspaceId])

  return <iframe ref={frame} className="editor-frame" src={src} title={title} />
}
