import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { errorText } from '../shared/api-problems'
import { ApiError, EditorSession, FlowApi, type FlowDetail } from './api'
import { FlowEditor } from './FlowEditor'
import { useT } from './i18n'
import { ParentChannel, type EditorMessage } from './protocol'
import type { EditorRoute } from './route'
import { WorkspaceProvider, type Catalog } from './workspace'

type Phase =
  | { name: 'waiting' }
  | { name: 'signing-in' }
  | { name: 'loading' }
  | { name: 'ready'; flow: FlowDetail; catalog: Catalog }
  | { name: 'failed'; message: string }

/**
 * The handshake, then the editor: says `ready` to the host, waits for its `auth`, trades the
 * one-time token, loads the flow and the workspace, and shows the editor.
 */
export function App({ route }: { route: EditorRoute }) {
  const t = useT()
  const channel = useMemo(() => new ParentChannel(window), [])
  const session = useMemo(() => new EditorSession(window.location.origin), [])
  const api = useMemo(() => new FlowApi(session), [session])
  const [phase, setPhase] = useState<Phase>({ name: 'waiting' })
  const [expired, setExpired] = useState(false)
  const loadedRef = useRef(false)

  const notify = useCallback((message: EditorMessage) => channel.post(message), [channel])

  const onAuth = useCallback(
    async (ott: string) => {
      if (!route.flowId) {
        setPhase({ name: 'failed', message: t('app.noFlow') })
        notify({ type: 'error', code: 'flow_not_found', message: 'The editor address names no flow' })
        return
      }
      // A later `auth` (after an expired session) signs in again and keeps the editor as it is.
      if (!loadedRef.current) setPhase({ name: 'signing-in' })
      try {
        await session.exchange(ott)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        if (!loadedRef.current) setPhase({ name: 'failed', message: t('app.authFailed', { message: errorText(error, t) }) })
        notify({ type: 'error', code: 'auth_failed', message })
        return
      }
      setExpired(false)
      notify({ type: 'authenticated' })
      if (loadedRef.current) return
      setPhase({ name: 'loading' })
      try {
        const [flow, sectors, variables, pipelines] = await Promise.all([api.flow(route.flowId), api.sectors(), api.variables(), api.pipelines()])
        loadedRef.current = true
        setPhase({ name: 'ready', flow, catalog: { sectors, variables, pipelines } })
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        const notFound = error instanceof ApiError && error.status === 404
        setPhase({ name: 'failed', message: notFound ? t('app.noFlow') : t('app.loadFailed', { message: errorText(error, t) }) })
        notify({ type: 'error', code: notFound ? 'flow_not_found' : 'request_failed', message })
      }
    },
    [api, notify, route.flowId, session, t],
  )

  // Listen and say `ready` once, whatever re-renders.
  const onAuthRef = useRef(onAuth)
  onAuthRef.current = onAuth
  useEffect(() => {
    session.onExpired = () => {
      setExpired(true)
      notify({ type: 'error', code: 'session_expired', message: 'The editor session has expired; send a new auth message' })
    }
    const stop = channel.listen((message) => void onAuthRef.current(message.ott))
    channel.post({ type: 'ready' })
    return stop
  }, [channel, notify, session])

  useEffect(() => () => session.dispose(), [session])

  switch (phase.name) {
    case 'waiting':
      return <Message text={channel.embedded ? t('app.waiting') : t('app.notEmbedded')} />
    case 'signing-in':
      return <Message text={t('app.signingIn')} />
    case 'loading':
      return <Message text={t('app.loading')} />
    case 'failed':
      return <Message text={phase.message} error />
    case 'ready':
      return (
        <WorkspaceProvider api={api} flowId={phase.flow.id} initial={phase.catalog}>
          {expired && (
            <div className="banner error" role="alert">
              {t('app.sessionExpired')}
            </div>
          )}
          <FlowEditor flow={phase.flow} api={api} theme={route.theme} notify={notify} />
        </WorkspaceProvider>
      )
  }
}

function Message({ text, error }: { text: string; error?: boolean }) {
  return (
    <div className="center-message" role={error ? 'alert' : 'status'} data-testid="app-message">
      <p className={error ? 'error' : undefined}>{text}</p>
    </div>
  )
}
