import { useEffect, useState, type ReactNode } from 'react'
import { Link, useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync, type Async } from '../../components/async'
import { DetailView, Facts } from '../../components/DetailView'
import { JsonBlock } from '../../components/JsonBlock'
import { NodeName, useNodeNames, type ShownNode } from '../../components/NodeName'
import { shortId } from '../../components/short-id'
import { DateTime, ErrorNotice, Loading } from '../../components/ui'
import { useT } from '../../i18n'
import type { SessionDetail, Transcript } from './api-types'
import { SendMessage } from './SendMessage'
import { SessionDeliveries } from './SessionDeliveries'
import { SessionStatusBadge } from './SessionStatusBadge'
import { useSessionStream } from './session-stream'
import { Timeline } from './Timeline'
import { TranscriptChat } from './Transcript'
import { TurnIntoTest } from './TurnIntoTest'

/** How often the page looks again while the engine still has messages of this session to answer. */
const PENDING_POLL_MS = 1000

/**
 * One session: its summary, the conversation as a chat (followed live while the session is
 * active), its event timeline and the webhooks it made.
 */
export function SessionScreen() {
  const t = useT()
  const { sessionId } = useParams<{ sessionId: string }>()
  // Bumped to load every part again: after a turn, after a message is sent, and while the engine has some to answer.
  const [version, setVersion] = useState(0)
  const reload = () => setVersion((v) => v + 1)
  const detail = useAsync(() => unwrap(api.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId } } })), [sessionId, version])
  const transcript = useAsync(() => loadTranscript(sessionId), [sessionId, version])
  const following = useSessionStream(sessionId, detail.data?.status === 'active', reload)
  // A turn that tells nothing sends no stream event: the count of messages waiting says the bot is still at work.
  const pending = detail.data?.pendingMessages ?? 0
  useEffect(() => {
    if (pending === 0) return
    const timer = setTimeout(reload, PENDING_POLL_MS)
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
        <SessionBody session={session} transcript={transcript} version={version} onSent={reload}>
          <p role="status" className="hint">
            {pending > 0 ? t('sessions.session.pending', { count: pending }) : following === 'reconnecting' ? t('sessions.session.reconnecting') : following === 'live' ? t('sessions.session.live') : ''}
          </p>
        </SessionBody>
      )}
    </DetailView>
  )
}

function SessionBody({ session, transcript, version, onSent, children }: { session: SessionDetail; transcript: Async<Transcript>; version: number; onSent(): void; children: ReactNode }) {
  const t = useT()
  const flow = useFlowOf(session)
  const nodeName = useNodeNames(flow.data?.definition)
  const sectorName = useSectorNames()
  return (
    <>
      <Summary session={session} flowName={flow.data?.name} nodeName={nodeName} />
      <TurnIntoTest sessionId={session.id} nodeName={nodeName} />

      <h2>{t('sessions.chat.title')}</h2>
      {children}
      {transcript.error && <ErrorNotice error={transcript.error} onRetry={transcript.reload} />}
      {!transcript.data && !transcript.error && <Loading />}
      {transcript.data && <TranscriptChat transcript={transcript.data} nodeName={nodeName} sectorName={sectorName} />}
      {session.status === 'active' && (
        <>
          <h3 className="sessions-h3">{t('sessions.send.title')}</h3>
          <SendMessage sessionId={session.id} onSent={onSent} />
        </>
      )}

      <h2>{t('sessions.timeline.title')}</h2>
      <Timeline sessionId={session.id} version={version} nodeName={nodeName} />

      <h2>{t('sessions.deliveries.title')}</h2>
      <SessionDeliveries sessionId={session.id} version={version} />
    </>
  )
}

/** The session's flow: its name, and the definition it runs (a preview's is the flow's draft), which names its nodes. */
function useFlowOf(session: SessionDetail) {
  return useAsync(async () => {
    const flow = await unwrap(api.GET('/v1/flows/{id}', { params: { path: { id: session.flowId } } }))
    if (session.flowVersion === 0) return { name: flow.name, definition: flow.definition }
    const published = await unwrap(api.GET('/v1/flows/{id}/versions/{version}', { params: { path: { id: session.flowId, version: session.flowVersion } } }))
    return { name: flow.name, definition: published.definition }
  }, [session.flowId, session.flowVersion])
}

/** A transfer's sector by its name (the workspace's first page of sectors; another shows as its id). */
function useSectorNames(): (id: string) => string | undefined {
  const sectors = useAsync(async () => (await unwrap(api.GET('/v1/sectors', { params: { query: { size: 100 } } }))).content, [])
  const names = new Map((sectors.data ?? []).map((sector) => [sector.id, sector.name]))
  return (id) => names.get(id)
}

/** The transcript as JSON (the endpoint also speaks Markdown, which this page does not ask for). */
async function loadTranscript(sessionId: string): Promise<Transcript> {
  const transcript = await unwrap(api.GET('/v1/sessions/{sessionId}/transcript', { params: { path: { sessionId } }, headers: { accept: 'application/json' } }))
  if (typeof transcript === 'string') throw new Error('the transcript came as text, not JSON')
  return transcript
}

function Summary({ session, flowName, nodeName }: { session: SessionDetail; flowName: string | undefined; nodeName(id: string): ShownNode }) {
  const t = useT()
  const version = session.flowVersion === 0 ? t('sessions.session.draft') : t('sessions.session.version', { version: session.flowVersion })
  const facts: [string, ReactNode][] = [
    [t('sessions.field.status'), <SessionStatusBadge status={session.status} />],
    [t('sessions.field.session'), <span className="mono">{session.id}</span>],
    [t('sessions.field.externalId'), session.externalId ?? t('common.none')],
    [
      t('sessions.field.flow'),
      <span data-testid="session-flow">
        <Link href={`~/dashboard/flows/${session.flowId}`} title={session.flowId}>
          {flowName ?? shortId(session.flowId)}
        </Link>{' '}
        · {version}
      </span>,
    ],
    [t('sessions.field.startedAt'), <DateTime value={session.startedAt} />],
    [t('sessions.field.finishedAt'), <DateTime value={session.finishedAt} />],
    [t('sessions.field.expiresAt'), <DateTime value={session.expiresAt} />],
    [t('sessions.session.waitingAt'), session.waitingAt ? <NodeName node={nodeName(session.waitingAt)} gist /> : t('common.none')],
    [t('sessions.session.pendingMessages'), session.pendingMessages],
    [t('sessions.field.warnings'), session.warnings],
  ]
  if (session.failureReason) facts.push([t('sessions.session.failureReason'), t(`sessions.failure.${session.failureReason}`)])
  if (session.modelUsage.calls > 0) facts.push([t('sessions.session.modelUsage'), <ModelUsage usage={session.modelUsage} />])
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

/** The model calls the session's AI steps made, and their tokens. */
function ModelUsage({ usage }: { usage: SessionDetail['modelUsage'] }) {
  const t = useT()
  const format = new Intl.NumberFormat(t('api.numberLocale'))
  return (
    <span data-testid="session-model-usage">
      {t('sessions.session.modelUsageValue', { count: usage.calls, promptTokens: format.format(usage.promptTokens), completionTokens: format.format(usage.completionTokens) })}
    </span>
  )
}
