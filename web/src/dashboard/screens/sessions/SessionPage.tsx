import { useEffect, useState, type ReactNode } from 'react'
import { useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DetailView, Facts } from '../../components/DetailView'
import { JsonBlock } from '../../components/JsonBlock'
import { shortId } from '../../components/short-id'
import { DateTime, ErrorNotice, Loading } from '../../components/ui'
import { useT } from '../../i18n'
import type { SessionDetail, Transcript } from './api-types'
import { SendMessage } from './SendMessage'
import { SessionDeliveries } from './SessionDeliveries'
import { SessionStatusBadge } from './SessionStatusBadge'
import { Timeline } from './Timeline'
import { TranscriptChat } from './Transcript'

/** How often the page looks again while the engine still has messages of this session to answer. */
const PENDING_POLL_MS = 1000

/** One session: its summary, the conversation as a chat, its event timeline and the webhooks it made. */
export function SessionScreen() {
  const t = useT()
  const { sessionId } = useParams<{ sessionId: string }>()
  // Bumped to load every part again: after a message is sent, and while the engine has some to answer.
  const [version, setVersion] = useState(0)
  const detail = useAsync(() => unwrap(api.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId } } })), [sessionId, version])
  const transcript = useAsync(() => loadTranscript(sessionId), [sessionId, version])
  const pending = detail.data?.pendingMessages ?? 0
  useEffect(() => {
    if (pending === 0) return
    const timer = setTimeout(() => setVersion((v) => v + 1), PENDING_POLL_MS)
    return () => clearTimeout(timer)
  }, [pending, detail.data])

  return (
    <DetailView
      detail={detail}
      title={t('sessions.session.title', { id: shortId(sessionId) })}
      back={{ href: '/', label: t('sessions.session.back') }}
      notFound={t('sessions.session.notFound')}
    >
      {(session) => (
        <>
          <Summary session={session} />

          <h2>{t('sessions.chat.title')}</h2>
          <p role="status" className="hint">
            {pending > 0 ? t('sessions.session.pending', { count: pending }) : ''}
          </p>
          {transcript.error && <ErrorNotice error={transcript.error} onRetry={transcript.reload} />}
          {!transcript.data && !transcript.error && <Loading />}
          {transcript.data && <TranscriptChat transcript={transcript.data} />}
          {session.status === 'active' && (
            <>
              <h3 className="sessions-h3">{t('sessions.send.title')}</h3>
              <SendMessage sessionId={sessionId} onSent={() => setVersion((v) => v + 1)} />
            </>
          )}

          <h2>{t('sessions.timeline.title')}</h2>
          <Timeline sessionId={sessionId} version={version} />

          <h2>{t('sessions.deliveries.title')}</h2>
          <SessionDeliveries sessionId={sessionId} version={version} />
        </>
      )}
    </DetailView>
  )
}

/** The transcript as JSON (the endpoint also speaks Markdown, which this page does not ask for). */
async function loadTranscript(sessionId: string): Promise<Transcript> {
  const transcript = await unwrap(api.GET('/v1/sessions/{sessionId}/transcript', { params: { path: { sessionId } }, headers: { accept: 'application/json' } }))
  if (typeof transcript === 'string') throw new Error('the transcript came as text, not JSON')
  return transcript
}

function Summary({ session }: { session: SessionDetail }) {
  const t = useT()
  const facts: [string, ReactNode][] = [
    [t('sessions.field.status'), <SessionStatusBadge status={session.status} />],
    [t('sessions.field.session'), <span className="mono">{session.id}</span>],
    [t('sessions.field.externalId'), session.externalId ?? t('common.none')],
    [t('sessions.field.flow'), <span className="mono">{t('sessions.session.flowVersion', { id: shortId(session.flowId), version: session.flowVersion })}</span>],
    [t('sessions.field.startedAt'), <DateTime value={session.startedAt} />],
    [t('sessions.field.finishedAt'), <DateTime value={session.finishedAt} />],
    [t('sessions.field.expiresAt'), <DateTime value={session.expiresAt} />],
    [t('sessions.session.waitingAt'), session.waitingAt ? <span className="mono">{session.waitingAt}</span> : t('common.none')],
    [t('sessions.session.pendingMessages'), session.pendingMessages],
    [t('sessions.field.warnings'), session.warnings],
  ]
  if (session.failureReason) facts.push([t('sessions.session.failureReason'), t(`sessions.failure.${session.failureReason}`)])
  return (
    <div className="card">
      <Facts facts={facts} />
      {Object.keys(session.variables).length > 0 && (
        <details>
          <summary>{t('sessions.session.variables', { count: Object.keys(session.variables).length })}</summary>
          <JsonBlock value={session.variables} />
        </details>
      )}
    </div>
  )
}
