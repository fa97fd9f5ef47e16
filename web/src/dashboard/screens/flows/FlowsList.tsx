import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { isUuid, oneOf, useQueryParams } from '../../components/address'
import { useAsync } from '../../components/async'
import { FilterForm, filtersOf, PageSizeField } from '../../components/FilterForm'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime, Field, PageHeader, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { useActingWorkspace } from '../../acting-workspace'
import { CREATE_FLOW_FORM, CreateFlowForm } from './CreateFlow'
import { DATE_RANGES, DIRECTIONS, FLOW_ORDER_COLUMNS, type FlowItem } from './api-types'

const FILTERS = ['workspaceId', 'workspaceName', 'dateRange', 'orderBy', 'direction', 'size'] as const
type Filters = Record<(typeof FILTERS)[number], string>

/** The organization's flows: every filter of GET /v1/flows, kept in the address; and a new flow. */
export function FlowsListScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const query = {
    workspaceId: isUuid(params.get('workspaceId') ?? '') ? (params.get('workspaceId') ?? undefined) : undefined,
    workspaceName: params.get('workspaceName') || undefined,
    dateRange: oneOf(params, 'dateRange', DATE_RANGES),
    orderBy: oneOf(params, 'orderBy', FLOW_ORDER_COLUMNS),
    direction: oneOf(params, 'direction', DIRECTIONS),
  }
  const flows = usePagedList((paging) => unwrap(api.GET('/v1/flows', { params: { query: { ...paging, ...query } } })), [params.toString()])
  const columns = useColumns()
  const filtered = [query.workspaceId, query.workspaceName, query.dateRange].some((value) => value !== undefined)

  return (
    <section>
      <PageHeader title={t('flows.list.title')} />
      <CreateFlowForm />
      <h2 className="flows-subtitle">{t('flows.list.existing')}</h2>
      {(filtered || flows.data?.totalElements !== 0) && <FlowFilters key={params.toString()} filters={filtersOf(params, FILTERS)} onApply={(next) => setParams({ ...next, page: undefined })} />}
      <ListView
        list={flows}
        filtered={filtered}
        noMatch={t('flows.list.empty')}
        empty={{
          title: t('flows.list.none'),
          hint: t('flows.list.noneHint'),
          action: (
            <button type="button" onClick={() => document.querySelector<HTMLInputElement>(`#${CREATE_FLOW_FORM} input`)?.focus()}>
              {t('flows.create.title')}
            </button>
          ),
        }}
        caption={(found) => t('flows.list.caption', { total: found.totalElements })}
        className="flows-table"
        rowKey={(flow) => flow.id}
        columns={columns}
      />
    </section>
  )
}

/** The list's columns: each flow opens in its own workspace, which following its link chooses. */
function useColumns(): Column<FlowItem>[] {
  const t = useT()
  const { addressOf } = useActingWorkspace()
  const address = (flow: FlowItem, path = '') => addressOf(`/${flow.id}${path}`, flow.workspace.id)
  return [
    { header: t('common.name'), namesRow: true, cell: (flow) => <Link href={address(flow)}>{flow.name}</Link> },
    { header: t('flows.field.workspace'), cell: (flow) => flow.workspace.name },
    { header: t('common.createdAt'), cell: (flow) => <DateTime value={flow.createdAt} /> },
    { header: t('common.updatedAt'), cell: (flow) => <DateTime value={flow.updatedAt} /> },
    {
      header: t('common.actions'),
      className: 'flows-row-actions',
      cell: (flow) => (
        <>
          <Link href={address(flow, '/edit')} aria-label={t('flows.list.editNamed', { name: flow.name })}>
            {t('flows.openEditor')}
          </Link>
          <Link href={address(flow, '/analytics')} aria-label={t('flows.list.analyticsNamed', { name: flow.name })}>
            {t('flows.tab.analytics')}
          </Link>
        </>
      ),
    },
  ]
}

function FlowFilters({ filters, onApply }: { filters: Filters; onApply(filters: Filters): void }) {
  const t = useT()
  const workspaces = useAsync(() => unwrap(api.GET('/v1/workspaces', { params: { query: { size: 100 } } })), [])
  return (
    <FilterForm className="flows-filters" filters={filters} onApply={onApply}>
      {(draft, change) => (
        <>
          <SelectField
            label={t('flows.field.workspace')}
            value={draft.workspaceId}
            onChange={change('workspaceId')}
            blank={t('flows.filter.any')}
            options={(workspaces.data?.content ?? []).map((workspace) => ({ value: workspace.id, label: workspace.name }))}
          />
          <Field label={t('flows.filter.workspaceName')}>{(props) => <input {...props} value={draft.workspaceName} onChange={(event) => change('workspaceName')(event.target.value)} />}</Field>
          <SelectField label={t('flows.filter.dateRange')} value={draft.dateRange} onChange={change('dateRange')} blank={t('flows.filter.anyTime')} options={DATE_RANGES.map((range) => ({ value: range, label: t(`flows.dateRange.${range}`) }))} />
          <SelectField label={t('flows.filter.orderBy')} value={draft.orderBy} onChange={change('orderBy')} blank={t('flows.filter.defaultOrder')} options={FLOW_ORDER_COLUMNS.map((column) => ({ value: column, label: t(`flows.order.${column}`) }))} />
          <SelectField label={t('flows.filter.direction')} value={draft.direction || 'ASC'} onChange={change('direction')} options={DIRECTIONS.map((direction) => ({ value: direction, label: t(`flows.direction.${direction}`) }))} />
          <PageSizeField value={draft.size} onChange={change('size')} />
        </>
      )}
    </FilterForm>
  )
}
