import { useEffect, useState, type FormEvent } from 'react'
import { Link, useSearch } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, PageHeader, Pager, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { isUuid, oneOf, pageOf, useQueryParams } from '../../components/address'
import { shortId } from '../../components/short-id'
import { DIRECTIONS, PAGE_SIZES } from '../sessions/api-types'
import { FailingDestinationsNotice, useFailingDestinations } from './Destinations'
import { DELIVERY_STATUSES, type Delivery } from './api-types'
import { AttemptsTable } from './AttemptsTable'
import { DeliveryStatusBadge } from './DeliveryStatusBadge'
import { RetryControl, useRetriableDelivery } from './Retry'

/**
 * The workspace's failing destinations, then its webhook deliveries, a tab per status, each with its
 * attempts; failed, dead and delivered ones can be sent again.
 */
export function DeliveriesScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const page = pageOf(params)
  const status = oneOf(params, 'status', DELIVERY_STATUSES)
  const query = {
    page,
    size: Number(oneOf(params, 'size', PAGE_SIZES) ?? PAGE_SIZES[0]),
    status,
    sessionId: params.get('sessionId') || undefined,
    direction: oneOf(params, 'direction', DIRECTIONS),
  }
  const deliveries = useAsync(() => unwrap(api.GET('/v1/webhooks/deliveries', { params: { query } })), [params.toString()])
  const destinations = useFailingDestinations()

  return (
    <section>
      <PageHeader title={t('webhooks.title')} />
      <FailingDestinationsNotice destinations={destinations} />
      <StatusTabs current={status} />
      <FilterForm
        key={params.toString()}
        sessionId={params.get('sessionId') ?? ''}
        direction={query.direction ?? 'ASC'}
        size={String(query.size)}
        onApply={(next) => setParams({ ...next, page: undefined })}
      />
      {deliveries.error && <ErrorNotice error={deliveries.error} onRetry={deliveries.reload} />}
      {!deliveries.data && !deliveries.error && <Loading />}
      {deliveries.data && deliveries.data.content.length === 0 && <Empty>{t('webhooks.list.empty')}</Empty>}
      {deliveries.data && deliveries.data.content.length > 0 && (
        <>
          <ul className="webhooks-list" aria-label={t('webhooks.list.label')}>
            {deliveries.data.content.map((delivery) => (
              <DeliveryItem key={delivery.id} delivery={delivery} onRetried={destinations.loaded.reload} />
            ))}
          </ul>
          <Pager page={page} totalPages={deliveries.data.totalPages} totalElements={deliveries.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
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

function FilterForm({ sessionId, direction, size, onApply }: { sessionId: string; direction: string; size: string; onApply(next: Record<string, string>): void }) {
  const t = useT()
  const [draft, setDraft] = useState({ sessionId, direction, size })
  const [sessionIdError, setSessionIdError] = useState<string>()
  const set = (name: keyof typeof draft) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value })
  const change = (name: keyof typeof draft) => (value: string) => setDraft({ ...draft, [name]: value })

  function submit(event: FormEvent) {
    event.preventDefault()
    const id = draft.sessionId.trim()
    if (id && !isUuid(id)) {
      setSessionIdError(t('webhooks.filter.sessionIdInvalid'))
      return
    }
    setSessionIdError(undefined)
    onApply({ ...draft, sessionId: id })
  }

  return (
    <form className="filters" role="search" aria-label={t('common.filters')} onSubmit={submit}>
      <Field label={t('webhooks.filter.sessionId')} error={sessionIdError}>
        {(props) => <input {...props} className="mono" value={draft.sessionId} onChange={set('sessionId')} spellCheck={false} />}
      </Field>
      <SelectField label={t('webhooks.filter.direction')} value={draft.direction} onChange={change('direction')} options={DIRECTIONS.map((value) => ({ value, label: t(`webhooks.direction.${value}`) }))} />
      <SelectField label={t('pager.size')} value={draft.size} onChange={change('size')} options={PAGE_SIZES.map((value) => ({ value: String(value), label: value }))} />
      <div className="webhooks-filter-actions">
        <button type="submit">{t('common.apply')}</button>
        <button type="button" className="secondary" onClick={() => onApply({ sessionId: '', direction: '', size: '' })}>
          {t('common.clear')}
        </button>
      </div>
    </form>
  )
}
