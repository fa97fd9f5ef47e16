import { useT } from '../../i18n'
import type { Attempt } from './api-types'

/** A delivery's attempts, oldest first: when, what came back, how long it took; with the response bodies when the API gave them. */
export function AttemptsTable({ attempts, caption }: { attempts: Attempt[]; caption: string }) {
  const t = useT()
  if (attempts.length === 0) return <p className="empty">{t('webhooks.attempts.none')}</p>
  const withBodies = attempts.some((attempt) => attempt.responseBody !== undefined)
  return (
    <table className="webhooks-table webhooks-attempts">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{t('webhooks.attempts.number')}</th>
          <th scope="col">{t('webhooks.attempts.at')}</th>
          <th scope="col">{t('webhooks.attempts.statusCode')}</th>
          <th scope="col">{t('webhooks.attempts.error')}</th>
          <th scope="col">{t('webhooks.attempts.duration')}</th>
          {withBodies && <th scope="col">{t('webhooks.attempts.response')}</th>}
        </tr>
      </thead>
      <tbody>
        {attempts.map((attempt) => (
          <tr key={attempt.attempt}>
            <td>{attempt.attempt}</td>
            <td>
              <PreciseTime value={attempt.attemptedAt} />
            </td>
            <td>
              {attempt.statusCode === null ? (
                t('webhooks.attempts.noResponse')
              ) : (
                <span className={attempt.statusCode < 300 ? 'badge status-badge ok' : 'badge status-badge error'}>{attempt.statusCode}</span>
              )}
            </td>
            <td className={attempt.error ? 'webhooks-error' : undefined}>{attempt.error ?? t('common.none')}</td>
            <td>{t('webhooks.attempts.ms', { ms: attempt.durationMs })}</td>
            {withBodies && (
              <td>
                {attempt.responseBody ? (
                  <pre className="snippet webhooks-response" tabIndex={0}>
                    {attempt.responseBody}
                    {attempt.responseTruncated ? `\n${t('webhooks.attempts.truncated')}` : ''}
                  </pre>
                ) : (
                  t('common.none')
                )}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** A time to the second: a delivery's attempts often fall within the same minute. */
function PreciseTime({ value }: { value: string }) {
  return <time dateTime={value}>{new Date(value).toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'medium' })}</time>
}
