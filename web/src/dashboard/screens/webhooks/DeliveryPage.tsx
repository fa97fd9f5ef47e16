import type { ReactNode } from 'react'
import { Link, useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DetailView, Facts } from '../../components/DetailView'
import { JsonBlock } from '../../components/JsonBlock'
import { shortId } from '../../components/short-id'
import { DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import type { Delivery } from './api-types'
import { AttemptsTable } from './AttemptsTable'
import { DeliveryStatusBadge } from './DeliveryStatusBadge'
import { RetryControl, useRetriableDelivery } from './Retry'

/** One delivery: where it went, every attempt with the response received, the body as sent; sent again from here. */
export function DeliveryScreen() {
  const t = useT()
  const { deliveryId } = useParams<{ deliveryId: string }>()
  const loaded = useAsync(() => unwrap(api.GET('/v1/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } })), [deliveryId])
  return (
    <DetailView detail={loaded} title={t('webhooks.delivery.title', { id: shortId(deliveryId) })} back={{ href: '/', label: t('webhooks.delivery.back') }} notFound={t('webhooks.delivery.notFound')}>
      {(delivery) => <DeliveryDetail loaded={delivery} />}
    </DetailView>
  )
}

function DeliveryDetail({ loaded }: { loaded: Delivery }) {
  const t = useT()
  const { delivery, phase, retry } = useRetriableDelivery(loaded)
  const facts: [string, ReactNode][] = [
    [t('webhooks.field.status'), <DeliveryStatusBadge status={delivery.status} />],
    [t('webhooks.field.id'), <span className="mono">{delivery.id}</span>],
    [
      t('webhooks.field.session'),
      <Link href={`~/dashboard/sessions/${delivery.sessionId}`} className="mono">
        {delivery.sessionId}
      </Link>,
    ],
    [t('webhooks.field.messageId'), <span className="mono">{delivery.messageId}</span>],
    [t('webhooks.field.callbackUrl'), delivery.callbackUrl ? <span className="mono">{delivery.callbackUrl}</span> : t('webhooks.field.noCallbackUrl')],
    [t('webhooks.field.createdAt'), <DateTime value={delivery.createdAt} />],
    [t('webhooks.field.deliveredAt'), <DateTime value={delivery.deliveredAt} />],
    [t('webhooks.field.nextAttemptAt'), <DateTime value={delivery.nextAttemptAt} />],
    [t('webhooks.field.attempts'), delivery.attemptCount],
    [t('webhooks.field.lastError'), delivery.lastError ?? t('common.none')],
  ]
  return (
    <>
      <div className="card">
        <Facts facts={facts} />
        <RetryControl delivery={delivery} phase={phase} onRetry={() => void retry()} />
      </div>
      <h2>{t('webhooks.delivery.attempts')}</h2>
      <AttemptsTable attempts={delivery.attempts} caption={t('webhooks.attempts.of', { id: shortId(delivery.id) })} />
      <h2>{t('webhooks.delivery.body')}</h2>
      <JsonBlock value={delivery.body} />
      <h2>{t('webhooks.delivery.events')}</h2>
      <ul className="mono webhooks-events">
        {delivery.eventIds.map((id) => (
          <li key={id}>{id}</li>
        ))}
      </ul>
    </>
  )
}
