import { useState, type FormEvent } from 'react'
import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, PageHeader, Pager, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { isUuid, oneOf, pageOf, useQueryParams } from '../../components/address'
import { CreateFlowForm } from './CreateFlow'
import { DATE_RANGES, DIRECTIONS, FLOW_ORDER_COLUMNS, PAGE_SIZES, type FlowItem } from './api-types'

const FILTERS = ['workspaceId', 'workspaceName', 'dateRange', 'orderBy', 'direction', 'size'] as const
type Filters = Record<(typeof FILTERS)[number], string>

/** The organization's flows: every filter of GET /v1/flows, kept in the address; and a new flow. */
export function FlowsListScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const page = pageOf(params)
  const query = {
    page,
    size: Number(oneOf(params, 'size', PAGE_SIZES) ?? PAGE_SIZES[0]),
    workspaceId: isUuid(params.get('workspaceId') ?? '') ? (params.get('workspaceId') ?? undefined) : undefined,
    workspaceName: params.get('workspaceName') || undefined,
    dateRange: oneOf(params, 'dateRange', DATE_RANGES),
    orderBy: oneOf(params, 'orderBy', FLOW_ORDER_COLUMNS),
    direction: oneOf(params, 'direction', DIRECTIONS),
  }
  const flows = useAsync(() => unwrap(api.GET('/v1/flows', { params: { query } })), [params.toString()])
  const workspaces = useAsync(() => unwrap(api.GET('/v1/workspaces', { params: { query: { size: 100 } } })), [])
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Filters

  return (
    <section>
      <PageHeader title={t('flows.list.title')} />
      <CreateFlowForm />
      <h2 className="flows-subtitle">{t('flows.list.existing')}</h2>
      <FilterForm
        key={params.toString()}
        filters={filters}
        workspaces={(workspaces.data?.content ?? []).map((w) => [w.id, w.name])}
        onApply={(next) => setParams({ ...next, page: undefined })}
      />
      {flows.error && <ErrorNotice error={flows.error} onRetry={flows.reload} />}
      {!flows.data && !flows.error && <Loading />}
      {flows.data && flows.data.content.length === 0 && <Empty>{t('flows.list.empty')}</Empty>}
      {flows.data && flows.data.content.length > 0 && (
        <>
          <table className="flows-table">
            <caption className="flows-caption">{t('flows.list.caption', { total: flows.data.totalElements })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('flows.field.workspace')}</th>
                <th scope="col">{t('common.createdAt')}</th>
                <th scope="col">{t('common.updatedAt')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {flows.data.content.map((flow) => (
                <FlowRow key={flow.id} flow={flow} />
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={flows.data.totalPages} totalElements={flows.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
    </section>
  )
}

function FlowRow({ flow }: { flow: FlowItem }) {
  const t = useT()
  const { workspaceId } = useSignedIn()
  // A flow is read through the signed-in key's workspace: another workspace's flow is listed, not opened.
  const reachable = flow.workspace.id === workspaceId
  return (
    <tr>
      <th scope="row">{reachable ? <Link href={`/${flow.id}`}>{flow.name}</Link> : <span title={t('flows.list.otherWorkspace')}>{flow.name}</span>}</th>
      <td>{flow.workspace.name}</td>
      <td>
        <DateTime value={flow.createdAt} />
      </td>
      <td>
        <DateTime value={flow.updatedAt} />
      </td>
      <td className="flows-row-actions">
        {reachable ? (
          <>
            <Link href={`/${flow.id}/edit`} aria-label={t('flows.list.editNamed', { name: flow.name })}>
              {t('flows.openEditor')}
            </Link>
            <Link href={`/${flow.id}/analytics`} aria-label={t('flows.list.analyticsNamed', { name: flow.name })}>
              {t('flows.tab.analytics')}
            </Link>
          </>
        ) : (
          <span className="hint">{t('flows.list.otherWorkspace')}</span>
        )}
      </td>
    </tr>
  )
}

function FilterForm({ filters, workspaces, onApply }: { filters: Filters; workspaces: [id: string, name: string][]; onApply(filters: Filters): void }) {
  const t = useT()
  const [draft, setDraft] = useState(filters)
  const set = (name: keyof Filters) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value })
  const change = (name: keyof Filters) => (value: string) => setDraft({ ...draft, [name]: value })

  function submit(event: FormEvent) {
    event.preventDefault()
    onApply({ ...draft, workspaceName: draft.workspaceName.trim() })
  }

  const clear = Object.fromEntries(FILTERS.map((name) => [name, ''])) as Filters
  return (
    <form className="filters flows-filters" role="search" aria-label={t('common.filters')} onSubmit={submit}>
      <SelectField label={t('flows.field.workspace')} value={draft.workspaceId} onChange={change('workspaceId')} blank={t('flows.filter.any')} options={workspaces.map(([id, name]) => ({ value: id, label: name }))} />
      <Field label={t('flows.filter.workspaceName')}>{(props) => <input {...props} value={draft.workspaceName} onChange={set('workspaceName')} />}</Field>
      <SelectField label={t('flows.filter.dateRange')} value={draft.dateRange} onChange={change('dateRange')} blank={t('flows.filter.anyTime')} options={DATE_RANGES.map((range) => ({ value: range, label: t(`flows.dateRange.${range}`) }))} />
      <SelectField label={t('flows.filter.orderBy')} value={draft.orderBy} onChange={change('orderBy')} blank={t('flows.filter.defaultOrder')} options={FLOW_ORDER_COLUMNS.map((column) => ({ value: column, label: t(`flows.order.${column}`) }))} />
      <SelectField label={t('flows.filter.direction')} value={draft.direction || 'ASC'} onChange={change('direction')} options={DIRECTIONS.map((direction) => ({ value: direction, label: t(`flows.direction.${direction}`) }))} />
      <SelectField label={t('pager.size')} value={draft.size || PAGE_SIZES[0]} onChange={change('size')} options={PAGE_SIZES.map((size) => ({ value: String(size), label: size }))} />
      <div className="flows-filter-actions">
        <button type="submit">{t('common.apply')}</button>
        <button type="button" className="secondary" onClick={() => onApply(clear)}>
          {t('common.clear')}
        </button>
      </div>
    </form>
  )
}
