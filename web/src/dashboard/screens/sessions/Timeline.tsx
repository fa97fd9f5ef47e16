import type { ReactNode } from 'react'
import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { JsonBlock } from '../../components/JsonBlock'
import { ListView } from '../../components/ListView'
import type { ShownNode } from '../../components/NodeName'
import { usePagedList } from '../../components/paged-list'
import { DateTime } from '../../components/ui'
import { clockTime } from '../../../shared/date-time'
import { useT, type Translate } from '../../i18n'
import { DeliveryStatusBadge } from '../webhooks/DeliveryStatusBadge'
import type { SessionEvent } from './api-types'
import { CallDetails, CallLine, callOf } from './OutsideCall'

const EVENTS_PAGE = 100

/**
 * Every recorded event of the session, oldest first, for auditors: its place in the log, who
 * caused it, and its data. What came from outside (a call's answer, an event, a timer) also says
 * what it was on a line of its own, and a call opens to what it sent and got back.
 */
export function Timeline({ sessionId, version, nodeName }: { sessionId: string; version: number; nodeName(id: string): ShownNode }) {
  const t = useT()
  const events = usePagedList(
    ({ page }) => unwrap(api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { page, size: EVENTS_PAGE } } })),
    [sessionId, version],
    'eventsPage',
  )
  return (
    <ListView list={events}>
      {(items) => (
        <ol className="timeline" aria-label={t('sessions.timeline.label')}>
          {items.map((event) => (
            <TimelineEvent key={event.id} event={event} nodeName={nodeName} />
          ))}
        </ol>
      )}
    </ListView>
  )
}

function TimelineEvent({ event, nodeName }: { event: SessionEvent; nodeName(id: string): ShownNode }) {
  const t = useT()
  const call = event.type === 'OutsideCallAnswered' ? callOf(event.data) : undefined
  const outside = summaryOf(event, t, nodeName)
  return (
    <li className="timeline-event">
      <div className="timeline-head">
        <span className="timeline-revision" title={t('sessions.timeline.revision')}>
          #{event.revision}
        </span>
        <strong className="timeline-type">{event.type}</strong>
        <DateTime value={event.createdAt} />
        <span className="timeline-fact">
          {t('sessions.timeline.position')} <span className="mono">{event.position}</span>
        </span>
        <span className="timeline-fact">
          {t('sessions.timeline.actor')} <span className="mono">{event.metadata.actor ?? t('common.none')}</span>
        </span>
        {event.webhookDelivery && (
          <span className="timeline-fact">
            <Link href={`~/dashboard/webhooks/${event.webhookDelivery.id}`}>{t('sessions.timeline.webhook')}</Link>{' '}
            <DeliveryStatusBadge status={event.webhookDelivery.status} />
          </span>
        )}
      </div>
      {outside && <p className="timeline-outside">{outside}</p>}
      <details className="timeline-details">
        <summary>{t('sessions.timeline.data', { type: event.type })}</summary>
        {call && <CallDetails call={call} />}
        <JsonBlock value={event.data} />
        <p className="timeline-subtitle">{t('sessions.timeline.metadata')}</p>
        <JsonBlock value={event.metadata} />
      </details>
    </li>
  )
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** What an event from outside the conversation was, in words; undefined for the others, whose type says it. */
function summaryOf(event: SessionEvent, t: Translate, nodeName: (id: string) => ShownNode): ReactNode {
  const data = isRecord(event.data) ? event.data : {}
  switch (event.type) {
    case 'OutsideCallAnswered': {
      const call = callOf(event.data)
      return call && <CallLine call={call} node={nodeName(call.nodeId)} />
    }
    case 'OutsideEventReceived': {
      const received = isRecord(data.event) ? data.event : {}
      return (
        <>
          {t('sessions.event.title')} <code>{String(received.name)}</code>
        </>
      )
    }
    case 'TimerFired':
      return typeof data.nodeId === 'string' && typeof data.until === 'string' ? t('sessions.chat.timer', { node: nodeName(data.nodeId).name, due: clockTime(data.until) }) : undefined
    default:
      return undefined
  }
}
