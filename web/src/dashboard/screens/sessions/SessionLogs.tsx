import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { isUuid, oneOf, useQueryParams } from '../../components/address'
import { useAsync } from '../../components/async'
import { FilterForm, filtersOf, PageSizeField } from '../../components/FilterForm'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { shortId } from '../../components/short-id'
import { DateTime, Field, PageHeader, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { useActingWorkspace } from '../../acting-workspace'
import { DATE_RANGES, DIRECTIONS, LOG_ORDER_COLUMNS, LOG_STATUSES, NEWEST_FIRST, type LogEntry } from './api-types'
import { SessionStatusBadge } from './SessionStatusBadge'
import { sessionStateKey } from './session-state'
import { StartSessionForm } from './StartSession'

const FILTERS = ['preview', 'workspaceId', 'status', 'dateRange', 'sessionId', 'orderBy', 'direction', 'size'] as const
type Filters = Record<(typeof FILTERS)[number], string>

/** Session logs of the organization: every filter of GET /v1/sessions/logs, kept in the address. */
export function SessionLogsScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const query = {
    workspaceId: params.get('workspaceId') || undefined,
    status: oneOf(params, 'status', LOG_STATUSES),
    dateRange: oneOf(params, 'dateRange', DATE_RANGES),
    sessionId: params.get('sessionId') || undefined,
    orderBy: oneOf(params, 'orderBy', LOG_ORDER_COLUMNS),
    // Newest first unless the address says otherwise (the API's own default is the spec's ASC).
    direction: oneOf(params, 'direction', DIRECTIONS) ?? NEWEST_FIRST,
    preview: params.get('preview') === 'true' ? true : undefined,
  }
  const logs = usePagedList((paging) => unwrap(api.GET('/v1/sessions/logs', { params: { query: { ...paging, ...query } } })), [params.toString()])
  const names = useNames()
  const columns = useColumns(names)
  const filtered = ['workspaceId', 'status', 'dateRange', 'sessionId', 'preview'].some((name) => params.get(name))

  return (
    <section>
      <PageHeader title={t('sessions.logs.title')} />
      <details className="card sessions-start">
        <summary>{t('sessions.start.title')}</summary>
        <StartSessionForm />
      </details>
      {(filtered || logs.data?.totalElements !== 0) && (
        <LogFilters key={params.toString()} filters={filtersOf(params, FILTERS)} workspaces={names.workspaces} onApply={(next) => setParams({ ...next, page: undefined })} />
      )}
      <ListView
        list={logs}
        filtered={filtered}
        noMatch={t('sessions.logs.empty')}
        empty={{ title: t('sessions.logs.none'), hint: t('sessions.logs.noneHint') }}
        caption={(found) => t('sessions.logs.caption', { total: found.totalElements })}
        className="sessions-table"
        rowKey={(entry) => entry.id}
        columns={columns}
      />
    </section>
  )
}

/** The list's columns: each session and flow opens in its own workspace, which following its link chooses. */
function useColumns(names: Names): Column<LogEntry>[] {
  const t = useT()
  const { addressOf } = useActingWorkspace()
  return [
    {
      header: t('sessions.field.session'),
      className: 'mono',
      cell: (entry) => (
        <Link href={addressOf(`/${entry.id}`, entry.workspaceId)} aria-label={t('sessions.logs.open', { id: shortId(entry.id) })} title={entry.id}>
          {shortId(entry.id)}
        </Link>
      ),
    },
    { header: t('sessions.field.status'), cell: (entry) => <SessionStatusBadge status={entry.status} /> },
    { header: t('sessions.field.externalId'), cell: (entry) => entry.externalId ?? t('common.none') },
    {
      header: t('sessions.field.flow'),
      cell: (entry) => (
        <Link href={addressOf(`~/dashboard/flows/${entry.flowId}`, entry.workspaceId)} title={entry.flowId}>
          {names.flows.get(entry.flowId) ?? <span className="mono">{shortId(entry.flowId)}</span>}
        </Link>
      ),
    },
    { header: t('sessions.field.workspace'), cell: (entry) => names.workspaces.get(entry.workspaceId) ?? <span className="mono">{shortId(entry.workspaceId)}</span> },
    { header: t('sessions.field.warnings'), cell: (entry) => entry.warnings },
    { header: t('sessions.field.startedAt'), cell: (entry) => <DateTime value={entry.startedAt} /> },
    { header: t('sessions.field.finishedAt'), cell: (entry) => <DateTime value={entry.finishedAt} /> },
    { header: t('sessions.field.expiresAt'), cell: (entry) => <DateTime value={entry.expiresAt} /> },
  ]
}

interface Names {
  workspaces: Map<string, string>
  flows: Map<string, string>
}

/** Names for the ids a log entry holds: the organization's workspaces (as the key sees them) and the key workspace's flows. */
function useNames(): Names {
  const workspaces = useAsync(() => unwrap(api.GET('/v1/workspaces', { params: { query: { size: 100 } } })), [])
  const flows = useAsync(() => unwrap(api.GET('/v1/flows', { params: { query: { size: 100 } } })), [])
  return {
    workspaces: new Map((workspaces.data?.content ?? []).map((w) => [w.id, w.name])),
    flows: new Map((flows.data?.content ?? []).map((f) => [f.id, f.name])),
  }
}

function LogFilters({ filters, workspaces, onApply }: { filters: Filters; workspaces: Map<string, string>; onApply(filters: Filters): void }) {
  const t = useT()
  return (
    <FilterForm
      className="sessions-filters"
      filters={filters}
      check={(draft) => (draft.sessionId && !isUuid(draft.sessionId) ? { sessionId: t('sessions.filter.sessionIdInvalid') } : {})}
      onApply={onApply}
    >
      {(draft, change, errors) => (
        <>
          <SelectField label={t('sessions.filter.kind')} value={draft.preview} onChange={change('preview')} blank={t('sessions.filter.kindSessions')} options={[{ value: 'true', label: t('sessions.filter.kindPreviews') }]} />
          <SelectField label={t('sessions.field.workspace')} value={draft.workspaceId} onChange={change('workspaceId')} blank={t('sessions.filter.any')} options={[...workspaces].map(([id, name]) => ({ value: id, label: name }))} />
          <SelectField label={t('sessions.field.status')} value={draft.status} onChange={change('status')} blank={t('sessions.filter.any')} options={LOG_STATUSES.map((status) => ({ value: status, label: t(sessionStateKey(status)) }))} />
          <SelectField label={t('sessions.filter.dateRange')} value={draft.dateRange} onChange={change('dateRange')} blank={t('sessions.filter.anyTime')} options={DATE_RANGES.map((range) => ({ value: range, label: t(`sessions.dateRange.${range}`) }))} />
          <Field label={t('sessions.filter.sessionId')} error={errors.sessionId}>
            {(props) => <input {...props} className="mono" value={draft.sessionId} onChange={(event) => change('sessionId')(event.target.value)} spellCheck={false} />}
          </Field>
          <SelectField label={t('sessions.filter.orderBy')} value={draft.orderBy} onChange={change('orderBy')} blank={t('sessions.filter.defaultOrder')} options={LOG_ORDER_COLUMNS.map((column) => ({ value: column, label: t(`sessions.field.${column}`) }))} />
          <SelectField label={t('sessions.filter.direction')} value={draft.direction || NEWEST_FIRST} onChange={change('direction')} options={DIRECTIONS.map((direction) => ({ value: direction, label: t(`sessions.direction.${direction}`) }))} />
          <PageSizeField value={draft.size} onChange={change('size')} />
        </>
      )}
    </FilterForm>
  )
}
