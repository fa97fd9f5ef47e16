import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { JsonBlock } from '../../components/JsonBlock'
import { ListView } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import { DeliveryStatusBadge } from '../webhooks/DeliveryStatusBadge'

const EVENTS_PAGE = 100

/** Every recorded event of the session, oldest first, for auditors: its place in the log, who caused it, and its data. */
export function Timeline({ sessionId, version }: { sessionId: string; version: number }) {
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
            <li key={event.id} className="timeline-event">
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
              <details className="timeline-details">
                <summary>{t('sessions.timeline.data', { type: event.type })}</summary>
                <JsonBlock value={event.data} />
                <p className="timeline-subtitle">{t('sessions.timeline.metadata')}</p>
                <JsonBlock value={event.metadata} />
              </details>
            </li>
          ))}
        </ol>
      )}
    </ListView>
  )
}
