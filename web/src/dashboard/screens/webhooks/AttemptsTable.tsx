import { Table, type Column } from '../../components/ListView'
import { useT } from '../../i18n'
import type { Attempt } from './api-types'

/** A delivery's attempts, oldest first: when, what came back, how long it took; with the response bodies when the API gave them. */
export function AttemptsTable({ attempts, caption }: { attempts: Attempt[]; caption: string }) {
  const t = useT()
  if (attempts.length === 0) return <p className="empty">{t('webhooks.attempts.none')}</p>
  const withBodies = attempts.some((attempt) => attempt.responseBody !== undefined)
  const columns: Column<Attempt>[] = [
    { header: t('webhooks.attempts.number'), cell: (attempt) => attempt.attempt },
    { header: t('webhooks.attempts.at'), cell: (attempt) => <PreciseTime value={attempt.attemptedAt} /> },
    {
      header: t('webhooks.attempts.statusCode'),
      cell: (attempt) =>
        attempt.statusCode === null ? (
          t('webhooks.attempts.noResponse')
        ) : (
          <span className={attempt.statusCode < 300 ? 'badge status-badge ok' : 'badge status-badge error'}>{attempt.statusCode}</span>
        ),
    },
    { header: t('webhooks.attempts.error'), cell: (attempt) => (attempt.error ? <span className="webhooks-error">{attempt.error}</span> : t('common.none')) },
    { header: t('webhooks.attempts.duration'), cell: (attempt) => t('webhooks.attempts.ms', { ms: attempt.durationMs }) },
  ]
  if (withBodies) {
    columns.push({
      header: t('webhooks.attempts.response'),
      cell: (attempt) =>
        attempt.responseBody ? (
          <pre className="snippet webhooks-response" tabIndex={0}>
            {attempt.responseBody}
            {attempt.responseTruncated ? `\n${t('webhooks.attempts.truncated')}` : ''}
          </pre>
        ) : (
          t('common.none')
        ),
    })
  }
  return <Table className="webhooks-table webhooks-attempts" caption={caption} items={attempts} rowKey={(attempt) => String(attempt.attempt)} columns={columns} />
}

/** A time to the second: a delivery's attempts often fall within the same minute. */
function PreciseTime({ value }: { value: string }) {
  return <time dateTime={value}>{new Date(value).toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'medium' })}</time>
}
