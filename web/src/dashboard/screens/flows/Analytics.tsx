import type { ReactNode } from 'react'
import { useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ErrorNotice, Field, Loading } from '../../components/ui'
import { useT } from '../../i18n'
import { oneOf, positiveOf, useQueryParams } from '../../components/address'
import { DropOffDiagram, FunnelTable, SessionsChart, SplitTable } from './charts'
import { FlowHeader, useFlow } from './FlowHeader'
import { sessionsPerDay, splitTests } from './analytics-figures'
import { DATE_RANGES, DAYS_IN_RANGE, type Definition, type FlowAnalytics } from './api-types'
import { flowOrder } from './definition'

/**
 * A flow's analytics, for one published version (GET /v1/flows/{id}/analytics): sessions started
 * per day, the tokens its AI steps used, per node the funnel and where sessions dropped off, and
 * its A/B tests' branches.
 */
export function AnalyticsScreen() {
  const t = useT()
  const { id } = useParams<{ id: string }>()
  const [params, setParams] = useQueryParams()
  const dateRange = oneOf(params, 'dateRange', DATE_RANGES)
  const version = positiveOf(params, 'version')
  const flow = useFlow(id)
  const versions = useAsync(() => unwrap(api.GET('/v1/flows/{id}/versions', { params: { path: { id }, query: { size: 100 } } })), [id])
  const analytics = useAsync(async () => {
    const counts = await unwrap(api.GET('/v1/flows/{id}/analytics', { params: { path: { id }, query: { version, dateRange } } }))
    const published = await unwrap(api.GET('/v1/flows/{id}/versions/{version}', { params: { path: { id, version: counts.version } } }))
    return { counts, definition: published.definition }
  }, [id, version, dateRange])

  return (
    <section className="flows-analytics">
      <FlowHeader id={id} title={flow.data ? t('flows.analytics.title', { name: flow.data.name }) : t('flows.analytics.titleUnnamed')} />
      <form className="filters" role="search" aria-label={t('common.filters')} onSubmit={(event) => event.preventDefault()}>
        <Field label={t('flows.filter.dateRange')}>
          {(props) => (
            <select {...props} value={dateRange ?? ''} onChange={(event) => setParams({ dateRange: event.target.value })}>
              <option value="">{t('flows.filter.anyTime')}</option>
              {DATE_RANGES.map((range) => (
                <option key={range} value={range}>
                  {t(`flows.dateRange.${range}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('flows.analytics.version')}>
          {(props) => (
            <select {...props} value={version ?? ''} onChange={(event) => setParams({ version: event.target.value })}>
              <option value="">{t('flows.analytics.newestVersion')}</option>
              {(versions.data?.content ?? []).map((item) => (
                <option key={item.version} value={item.version}>
                  {t('flows.flow.versionNumber', { version: item.version })}
                </option>
              ))}
            </select>
          )}
        </Field>
      </form>

      <div className="card" aria-labelledby="flows-per-day-title">
        <h2 id="flows-per-day-title">{t('flows.analytics.perDay')}</h2>
        <p className="hint">{t('flows.analytics.perDayHint')}</p>
        {analytics.error && <ErrorNotice error={analytics.error} onRetry={analytics.reload} />}
        {!analytics.data && !analytics.error && <Loading />}
        {analytics.data && <SessionsChart days={sessionsPerDay(analytics.data.counts.days, new Date(), dateRange ? DAYS_IN_RANGE[dateRange] : undefined)} />}
      </div>

      {analytics.error && <ErrorNotice error={analytics.error} onRetry={analytics.reload} />}
      {!analytics.data && !analytics.error && <Loading />}
      {analytics.data && (
        <>
          <Totals analytics={analytics.data.counts} />
          <ModelUsage analytics={analytics.data.counts} definition={analytics.data.definition} />
          <div className="card" aria-labelledby="flows-funnel-title">
            <h2 id="flows-funnel-title">{t('flows.analytics.funnel')}</h2>
            <p className="hint">{t('flows.analytics.funnelHint')}</p>
            <FunnelTable analytics={analytics.data.counts} definition={analytics.data.definition} />
          </div>
          <AbTests analytics={analytics.data.counts} definition={analytics.data.definition} />
          <div className="card" aria-labelledby="flows-dropoff-title">
            <h2 id="flows-dropoff-title">{t('flows.analytics.dropOff')}</h2>
            <p className="hint">{t('flows.analytics.dropOffHint')}</p>
            <DropOffDiagram analytics={analytics.data.counts} definition={analytics.data.definition} />
          </div>
        </>
      )}
    </section>
  )
}

const STATUSES = ['total', 'running', 'completed', 'timeout', 'error'] as const

/** Figures side by side, each a large number over its label. */
function Figures({ figures }: { figures: { key: string; value: ReactNode; label: string }[] }) {
  return (
    <ul className="flows-totals">
      {figures.map(({ key, value, label }) => (
        <li key={key} data-figure={key}>
          <span className="flows-total-value">{value}</span>
          <span className="flows-total-label">{label}</span>
        </li>
      ))}
    </ul>
  )
}

/** The version's sessions in the range, by status. */
function Totals({ analytics }: { analytics: FlowAnalytics }) {
  const t = useT()
  return (
    <div className="card" aria-labelledby="flows-totals-title">
      <h2 id="flows-totals-title">{t('flows.analytics.totals', { version: analytics.version })}</h2>
      <Figures figures={STATUSES.map((status) => ({ key: status, value: analytics.sessions[status], label: t(`flows.analytics.sessions.${status}`) }))} />
    </div>
  )
}

const USAGE = ['calls', 'promptTokens', 'completionTokens'] as const

/**
 * The model calls the version's AI steps made in the range and their tokens, in all and per model;
 * nothing for a version without AI steps that made none.
 */
function ModelUsage({ analytics, definition }: { analytics: FlowAnalytics; definition: Definition }) {
  const t = useT()
  const format = new Intl.NumberFormat(t('api.numberLocale'))
  const usage = analytics.modelUsage
  if (usage.calls === 0 && !definition.nodes.some((node) => node.type === 'ai')) return null
  return (
    <div className="card" aria-labelledby="flows-model-usage-title" data-testid="model-usage">
      <h2 id="flows-model-usage-title">{t('flows.analytics.modelUsage')}</h2>
      <p className="hint">{t('flows.analytics.modelUsageHint')}</p>
      <Figures figures={USAGE.map((figure) => ({ key: figure, value: format.format(usage[figure]), label: t(`flows.analytics.usage.${figure}`) }))} />
      {usage.models.length > 0 && (
        <table className="flows-data flows-usage-table">
          <caption className="flows-caption">{t('flows.analytics.usage.perModel')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('flows.analytics.usage.model')}</th>
              {USAGE.map((figure) => (
                <th scope="col" key={figure}>
                  {t(`flows.analytics.usage.${figure}`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {usage.models.map((row) => (
              <tr key={row.model} data-model={row.model}>
                <th scope="row">{row.model}</th>
                {USAGE.map((figure) => (
                  <td key={figure}>{format.format(row[figure])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

/** Each split node's branches, in flow order; nothing for a version without split nodes. */
function AbTests({ analytics, definition }: { analytics: FlowAnalytics; definition: Definition }) {
  const t = useT()
  const splits = splitTests(analytics, flowOrder(definition))
  if (splits.length === 0) return null
  return (
    <div className="card" aria-labelledby="flows-ab-tests-title" data-testid="ab-tests">
      <h2 id="flows-ab-tests-title">{t('flows.analytics.abTests')}</h2>
      <p className="hint">{t('flows.analytics.abTestsHint')}</p>
      {splits.map((split) => (
        <SplitTable key={split.nodeId} split={split} definition={definition} />
      ))}
    </div>
  )
}
