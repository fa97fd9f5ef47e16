import { useId, useState } from 'react'
import { api, unwrap } from '../../api'
import { useAsync, type Async } from '../../components/async'
import { ListView, Table } from '../../components/ListView'
import { DateTime, Pager } from '../../components/ui'
import { useT } from '../../i18n'
import type { Destination } from './api-types'

const PAGE_SIZE = 10

export interface FailingDestinations {
  loaded: Async<{ content: Destination[]; totalElements: number; totalPages: number }>
  page: number
  setPage(page: number): void
}

/** The workspace's failing destinations, a page at a time; the screen reloads them when a retry settles. */
export function useFailingDestinations(): FailingDestinations {
  const [page, setPage] = useState(0)
  const loaded = useAsync(() => unwrap(api.GET('/v1/webhooks/destinations', { params: { query: { state: 'failing', page, size: PAGE_SIZE } } })), [page])
  return { loaded, page, setPage }
}

/**
 * The destinations whose deliveries are held, with why and until when; a quiet line when none is.
 * Nothing while loading: the deliveries below already say so.
 */
export function FailingDestinationsNotice({ destinations: { loaded, page, setPage } }: { destinations: FailingDestinations }) {
  const t = useT()
  const headingId = useId()
  return (
    <ListView list={loaded} loading={null} empty={t('webhooks.destinations.healthy')}>
      {(items, found) => (
        <section className="webhooks-destinations" aria-labelledby={headingId}>
          <h2 id={headingId}>{t('webhooks.destinations.title')}</h2>
          <p className="notice warn">{t('webhooks.destinations.explain')}</p>
          <Table
            className="webhooks-table"
            labelledBy={headingId}
            items={items}
            rowKey={(destination) => destination.destination}
            columns={[
              { header: t('webhooks.destinations.destination'), namesRow: true, className: 'mono', cell: (destination) => destination.destination },
              { header: t('webhooks.destinations.failingSince'), cell: (destination) => <DateTime value={destination.failingSince} /> },
              { header: t('webhooks.destinations.failures'), cell: (destination) => destination.consecutiveFailures },
              { header: t('webhooks.field.lastError'), className: 'webhooks-error', cell: (destination) => destination.lastError ?? t('common.none') },
              { header: t('webhooks.destinations.held'), cell: (destination) => destination.heldDeliveries },
              { header: t('webhooks.destinations.nextProbe'), cell: (destination) => <NextProbe at={destination.nextProbeAt} /> },
            ]}
          />
          {found.totalPages > 1 && <Pager page={page} totalPages={found.totalPages} totalElements={found.totalElements} onPage={setPage} />}
        </section>
      )}
    </ListView>
  )
}

/** A probe whose time has come goes with the destination's next due delivery. */
function NextProbe({ at }: { at: string | null }) {
  const t = useT()
  if (at && new Date(at).getTime() <= Date.now()) return <>{t('webhooks.destinations.probeDue')}</>
  return <DateTime value={at} />
}
