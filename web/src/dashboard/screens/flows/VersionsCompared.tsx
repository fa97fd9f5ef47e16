import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { oneOf, useQueryParams } from '../../components/address'
import { useAsync } from '../../components/async'
import { Table, type Column } from '../../components/ListView'
import { ErrorNotice, Loading, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { DATE_RANGES, type FlowDetail, type VersionFigures } from './api-types'
import { ShareBadge } from './FlowRelease'

/** `count` of `total` as a whole percent; 0 of none. */
const rateOf = (count: number, total: number): number => (total === 0 ? 0 : Math.round((count / total) * 100))

/**
 * The flow's versions side by side (GET /v1/flows/{id}/analytics/versions): each one's share of
 * new sessions now, and its sessions started in the range (`?dateRange=`) with how they went.
 */
export function VersionsCompared({ flow }: { flow: FlowDetail }) {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const dateRange = oneOf(params, 'dateRange', DATE_RANGES)
  const compared = useAsync(
    () => unwrap(api.GET('/v1/flows/{id}/analytics/versions', { params: { path: { id: flow.id }, query: { dateRange } } })),
    [flow.id, dateRange, flow.release.liveVersion, flow.release.gradual?.version, flow.release.gradual?.percent],
  )
  const format = new Intl.NumberFormat(t('api.numberLocale'))
  const withRate = (count: number, total: number) => t('releases.compare.rate', { count: format.format(count), rate: rateOf(count, total) })
  const columns: Column<VersionFigures>[] = [
    {
      header: t('releases.compare.version'),
      namesRow: true,
      cell: (row) => (
        <Link href={`/${flow.id}/analytics?version=${row.version}`} aria-label={t('releases.compare.analytics', { version: row.version })}>
          {t('flows.flow.versionNumber', { version: row.version })}
        </Link>
      ),
    },
    { header: t('releases.compare.share'), cell: (row) => <ShareBadge release={flow.release} version={row.version} share={row.share} /> },
    { header: t('releases.compare.sessions'), className: 'releases-number', cell: (row) => format.format(row.sessions.total) },
    { header: t('releases.compare.completed'), className: 'releases-number', cell: (row) => withRate(row.sessions.completed, row.sessions.total) },
    { header: t('releases.compare.transferred'), className: 'releases-number', cell: (row) => withRate(row.transferred, row.sessions.total) },
    { header: t('releases.compare.timeout'), className: 'releases-number', cell: (row) => withRate(row.sessions.timeout, row.sessions.total) },
    { header: t('releases.compare.error'), className: 'releases-number', cell: (row) => withRate(row.sessions.error, row.sessions.total) },
  ]
  return (
    <section className="card releases-compare" aria-labelledby="releases-compare-title">
      <h2 id="releases-compare-title">{t('releases.compare.title')}</h2>
      <p className="hint">{t('releases.compare.intro')}</p>
      <div className="form-row releases-compare-filters">
        <SelectField
          label={t('releases.compare.range')}
          value={dateRange ?? ''}
          onChange={(value) => setParams({ dateRange: value })}
          blank={t('flows.filter.anyTime')}
          options={DATE_RANGES.map((range) => ({ value: range, label: t(`flows.dateRange.${range}`) }))}
        />
        <button type="button" className="secondary" onClick={compared.reload} disabled={compared.loading}>
          {t('releases.compare.refresh')}
        </button>
      </div>
      {compared.error && <ErrorNotice error={compared.error} onRetry={compared.reload} />}
      {!compared.data && !compared.error && <Loading />}
      {compared.data && (
        <Table
          className="releases-compare-table"
          caption={t('releases.compare.caption')}
          columns={columns}
          items={compared.data.versions}
          rowKey={(row) => String(row.version)}
        />
      )}
    </section>
  )
}
