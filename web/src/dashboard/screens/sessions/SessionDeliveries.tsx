import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ListView } from '../../components/ListView'
import { DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import { AttemptsTable } from '../webhooks/AttemptsTable'
import { DeliveryStatusBadge } from '../webhooks/DeliveryStatusBadge'

/** The webhooks this session's turns made (GET /v1/webhooks/deliveries filtered by sessionId), each with its attempts. */
export function SessionDeliveries({ sessionId, version }: { sessionId: string; version: number }) {
  const t = useT()
  const deliveries = useAsync(
    () => unwrap(api.GET('/v1/webhooks/deliveries', { params: { query: { sessionId, size: 100 } } })),
    [sessionId, version],
  )
  return (
    <ListView list={deliveries} empty={t('sessions.deliveries.empty')}>
      {(items) => (
        <>
          <ul className="session-deliveries">
            {items.map((delivery, index) => (
              <li key={delivery.id} className="card">
                <div className="session-delivery-head">
                  <DeliveryStatusBadge status={delivery.status} />
                  <Link href={`~/dashboard/webhooks/${delivery.id}`} aria-label={t('sessions.deliveries.openOf', { number: index + 1 })}>
                    {t('sessions.deliveries.number', { number: index + 1 })}
                  </Link>
                  <span>
                    <DateTime value={delivery.createdAt} />
                  </span>
                  <span>{t('sessions.deliveries.attempts', { count: delivery.attemptCount })}</span>
                  {delivery.lastError && <span className="webhooks-error">{delivery.lastError}</span>}
                </div>
                {delivery.attempts.length > 0 && (
                  <details>
                    <summary>{t('sessions.deliveries.showAttempts', { number: index + 1 })}</summary>
                    <AttemptsTable attempts={delivery.attempts} caption={t('sessions.deliveries.attemptsOf', { number: index + 1 })} />
                  </details>
                )}
              </li>
            ))}
          </ul>
          <p>
            <Link href={`~/dashboard/webhooks?sessionId=${sessionId}`} className="button-link secondary">
              {t('sessions.deliveries.inWebhooks')}
            </Link>
          </p>
        </>
      )}
    </ListView>
  )
}
