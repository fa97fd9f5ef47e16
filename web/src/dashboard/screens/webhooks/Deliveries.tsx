import { useEffect } from 'react'
import { Link, useSearch } from 'wouter'
import { api, unwrap } from '../../api'
import { isUuid, oneOf, useQueryParams } from '../../components/address'
import { FilterForm, filtersOf, PageSizeField } from '../../components/FilterForm'
import { ListView } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { shortId } from '../../components/short-id'
import { DateTime, Field, PageHeader, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { DIRECTIONS, NEWEST_FIRST } from '../sessions/api-types'
import { DELIVERY_STATUSES, type Delivery } from './api-types'
import { AttemptsTable } from './AttemptsTable'
import { DeliveryStatusBadge } from './DeliveryStatusBadge'
import { FailingDestinationsNotice, useFailingDestinations } from './Destinations'
import { RetryControl, useRetriableDelivery } from './Retry'

const FILTERS = ['sessionId', 'direction', 'size'] as const

/**
 * The workspace's failing destinations, then its webhook deliveries, a tab per status, each with its
 * attempts; failed, dead and delivered ones can be sent again.
 */
export function DeliveriesScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const status = oneOf(params, 'status', DELIVERY_STATUSES)
  const query = { status, sessionId: params.get('sessionId') || undefined, direction: oneOf(params, 'direction', DIRECTIONS) ?? NEWEST_FIRST }
  const deliveries = usePagedList((paging) => unwrap(api.GET('/v1/webhooks/deliveries', { params: { query: { ...paging, ...query } } })), [params.toString()])
  const destinations = useFailingDestinations()

  return (
    <section>
      <PageHeader title={t('webhooks.title')} />
      <FailingDestinationsNotice destinations={destinations} />
      <StatusTabs current={status} />
      <FilterForm
        key={params.toString()}
        filters={filtersOf(params, FILTERS)}
        check={(draft) => (draft.sessionId && !isUuid(draft.sessionId) ? { sessionId: t('webhooks.filter.sessionIdInvalid') } : {})}
        onApply={(next) => setParams({ ...next, page: undefined })}
      >
        {(draft, change, errors) => (
          <>
            <Field label={t('webhooks.filter.sessionId')} error={errors.sessionId}>
              {(props) => <input {...props} className="mono" value={draft.sessionId} onChange={(event) => change('sessionId')(event.target.value)} spellCheck={false} />}
            </Field>
            <SelectField label={t('webhooks.filter.direction')} value={draft.direction || NEWEST_FIRST} onChange={change('direction')} options={DIRECTIONS.map((value) => ({ value, label: t(`webhooks.direction.${value}`) }))} />
            <PageSizeField value={draft.size} onChange={change('size')} />
          </>
        )}
      </FilterForm>
      <ListView
        list={deliveries}
        filtered={query.status !== undefined || query.sessionId !== undefined}
        noMatch={t('webhooks.list.empty')}
        empty={{
          title: t('webhooks.list.none'),
          hint: t('webhooks.list.noneHint'),
          action: (
            <Link href="~/dashboard/sessions" className="button-link secondary">
              {t('webhooks.list.startSession')}
            </Link>
          ),
        }}
      >
        {(items) => (
          <ul className="webhooks-list" aria-label={t('webhooks.list.label')}>
            {items.map((delivery) => (
              <DeliveryItem key={delivery.id} delivery={delivery} onRetried={destinations.loaded.reload} />
            ))}
          </ul>
        )}
      </ListView>
    </section>
  )
}

/** Tabs by status; each keeps the other filters of the address and starts at the first page. */
function StatusTabs({ current }: { current: string | undefined }) {
  const t = useT()
  const search = useSearch()
  const hrefFor = (status: string | undefined) => {
    const next = new URLSearchParams(search)
    next.delete('page')
    if (status) next.set('status', status)
    else next.delete('status')
    const query = next.toString()
    return query ? `/?${query}` : '/'
  }
  const tabs = [{ status: undefined, label: t('webhooks.status.all') }, ...DELIVERY_STATUSES.map((status) => ({ status, label: t(`webhooks.status.${status}`) }))]
  return (
    <nav className="tabs" aria-label={t('webhooks.tabs.label')}>
      {tabs.map((tab) => (
        <Link key={tab.label} href={hrefFor(tab.status)} className={tab.status === current ? 'tab active' : 'tab'} aria-current={tab.status === current ? 'page' : undefined}>
          {tab.label}
        </Link>
      ))}
    </nav>
  )
}

function DeliveryItem({ delivery: listed, onRetried }: { delivery: Delivery; onRetried(): void }) {
  const t = useT()
  const { delivery, phase, retry } = useRetriableDelivery(listed)
  // A retry probes its destination: once it is over, the destination may be restored.
  const over = phase.name === 'settled' || phase.name === 'gave-up'
  useEffect(() => {
    if (over) onRetried()
  }, [over, onRetried])
  const short = shortId(delivery.id)
  return (
    <li className="card webhooks-item">
      <div className="webhooks-item-head">
        <DeliveryStatusBadge status={delivery.status} />
        <Link href={`/${delivery.id}`} className="mono" aria-label={t('webhooks.list.open', { id: short })}>
          {short}
        </Link>
        <span>
          {t('webhooks.field.session')}{' '}
          <Link href={`~/dashboard/sessions/${delivery.sessionId}`} className="mono">
            {shortId(delivery.sessionId)}
          </Link>
        </span>
        <DateTime value={delivery.createdAt} />
        <span>{t('webhooks.field.attemptCount', { count: delivery.attemptCount })}</span>
        {delivery.heldByDestination ? (
          <span>{t('webhooks.field.heldByDestination')}</span>
        ) : (
          delivery.nextAttemptAt && (
            <span>
              {t('webhooks.field.nextAttemptAt')} <DateTime value={delivery.nextAttemptAt} />
            </span>
          )
        )}
        <RetryControl delivery={delivery} phase={phase} onRetry={() => void retry()} />
      </div>
      {delivery.lastError && <p className="webhooks-error">{t('webhooks.field.lastErrorIs', { error: delivery.lastError })}</p>}
      {delivery.attempts.length > 0 && (
        <details>
          <summary>{t('webhooks.list.showAttempts', { id: short, count: delivery.attempts.length })}</summary>
          <AttemptsTable attempts={delivery.attempts} caption={t('webhooks.attempts.of', { id: short })} />
        </details>
      )}
    </li>
  )
}
