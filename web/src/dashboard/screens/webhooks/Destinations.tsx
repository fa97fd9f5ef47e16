import { useId, useState } from 'react'
import { api, unwrap } from '../../api'
import { useAsync, type Async } from '../../components/async'
import { DateTime, ErrorNotice, Pager } from '../../components/ui'
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
  if (loaded.error) return <ErrorNotice error={loaded.error} onRetry={loaded.reload} />
  if (!loaded.data) return null
  if (loaded.data.totalElements === 0) return <p className="empty">{t('webhooks.destinations.healthy')}</p>
  return (
    <section className="webhooks-destinations" aria-labelledby={headingId}>
      <h2 id={headingId}>{t('webhooks.destinations.title')}</h2>
      <p className="notice warn">{t('webhooks.destinations.explain')}</p>
      <table className="webhooks-table" aria-labelledby={headingId}>
        <thead>
          <tr>
            <th scope="col">{t('webhooks.destinations.destination')}</th>
            <th scope="col">{t('webhooks.destinations.failingSince')}</th>
            <th scope="col">{t('webhooks.destinations.failures')}</th>
            <th scope="col">{t('webhooks.field.lastError')}</th>
            <th scope="col">{t('webhooks.destinations.held')}</th>
            <th scope="col">{t('webhooks.destinations.nextProbe')}</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.content.map((destination) => (
            <tr key={destination.destination}>
              <th scope="row" className="mono">
                {destination.destination}
              </th>
              <td>
                <DateTime value={destination.failingSince} />
              </td>
              <td>{destination.consecutiveFailures}</td>
              <td className="webhooks-error">{destination.lastError ?? t('common.none')}</td>
              <td>{destination.heldDeliveries}</td>
              <td>
                <NextProbe at={destination.nextProbeAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {loaded.data.totalPages > 1 && <Pager page={page} totalPages={loaded.data.totalPages} totalElements={loaded.data.totalElements} onPage={setPage} />}
    </section>
  )
}

/** A probe whose time has come goes with the destination's next due delivery. */
function NextProbe({ at }: { at: string | null }) {
  const t = useT()
  if (at && new Date(at).getTime() <= Date.now()) return <>{t('webhooks.destinations.probeDue')}</>
  return <DateTime value={at} />
}
