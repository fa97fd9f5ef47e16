import { useState, type FormEvent } from 'react'
import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Field, Loading, PageHeader, Pager, SelectField } from '../../components/ui'
import { useT } from '../../i18n'
import { useSignedIn } from '../../session'
import { isUuid, oneOf, pageOf, useQueryParams } from '../../components/address'
import { shortId } from '../../components/short-id'
import { DATE_RANGES, DIRECTIONS, LOG_ORDER_COLUMNS, LOG_STATUSES, PAGE_SIZES, type LogEntry } from './api-types'
import { SessionStatusBadge } from './SessionStatusBadge'

const FILTERS = ['preview', 'workspaceId', 'status', 'dateRange', 'sessionId', 'orderBy', 'direction', 'size'] as const
type Filters = Record<(typeof FILTERS)[number], string>

/** Session logs of the organization: every filter of GET /v1/sessions/logs, kept in the address. */
export function SessionLogsScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const page = pageOf(params)
  const query = {
    page,
    size: Number(oneOf(params, 'size', PAGE_SIZES) ?? PAGE_SIZES[0]),
    workspaceId: params.get('workspaceId') || undefined,
    status: oneOf(params, 'status', LOG_STATUSES),
    dateRange: oneOf(params, 'dateRange', DATE_RANGES),
    sessionId: params.get('sessionId') || undefined,
    orderBy: oneOf(params, 'orderBy', LOG_ORDER_COLUMNS),
    direction: oneOf(params, 'direction', DIRECTIONS),
    preview: params.get('preview') === 'true' ? true : undefined,
  }
  const logs = useAsync(() => unwrap(api.GET('/v1/sessions/logs', { params: { query } })), [params.toString()])
  const names = useNames()
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Filters

  return (
    <section>
      <PageHeader title={t('sessions.logs.title')} />
      <FilterForm key={params.toString()} filters={filters} workspaces={names.workspaces} onApply={(next) => setParams({ ...next, page: undefined })} />
      {logs.error && <ErrorNotice error={logs.error} onRetry={logs.reload} />}
      {!logs.data && !logs.error && <Loading />}
      {logs.data && logs.data.content.length === 0 && <Empty>{t('sessions.logs.empty')}</Empty>}
      {logs.data && logs.data.content.length > 0 && (
        <>
          <table className="sessions-table">
            <caption className="sessions-caption">{t('sessions.logs.caption', { total: logs.data.totalElements })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('sessions.field.session')}</th>
                <th scope="col">{t('sessions.field.status')}</th>
                <th scope="col">{t('sessions.field.externalId')}</th>
                <th scope="col">{t('sessions.field.flow')}</th>
                <th scope="col">{t('sessions.field.workspace')}</th>
                <th scope="col">{t('sessions.field.warnings')}</th>
                <th scope="col">{t('sessions.field.startedAt')}</th>
                <th scope="col">{t('sessions.field.finishedAt')}</th>
                <th scope="col">{t('sessions.field.expiresAt')}</th>
              </tr>
            </thead>
            <tbody>
              {logs.data.content.map((entry) => (
                <LogRow key={entry.id} entry={entry} flowName={names.flows.get(entry.flowId)} workspaceName={names.workspaces.get(entry.workspaceId)} />
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={logs.data.totalPages} totalElements={logs.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
    </section>
  )
}

function LogRow({ entry, flowName, workspaceName }: { entry: LogEntry; flowName: string | undefined; workspaceName: string | undefined }) {
  const t = useT()
  const { workspaceId } = useSignedIn()
  // Sessions are read through the signed-in key's workspace: another workspace's session can be listed, not opened.
  const reachable = entry.workspaceId === workspaceId
  return (
    <tr>
      <td className="mono">
        {reachable ? (
          <Link href={`/${entry.id}`} aria-label={t('sessions.logs.open', { id: shortId(entry.id) })} title={entry.id}>
            {shortId(entry.id)}
          </Link>
        ) : (
          <span title={t('sessions.logs.otherWorkspace')}>{shortId(entry.id)}</span>
        )}
      </td>
      <td>
        <SessionStatusBadge status={entry.status} />
      </td>
      <td>{entry.externalId ?? t('common.none')}</td>
      <td>{flowName ?? <span className="mono">{shortId(entry.flowId)}</span>}</td>
      <td>{workspaceName ?? <span className="mono">{shortId(entry.workspaceId)}</span>}</td>
      <td>{entry.warnings}</td>
      <td>
        <DateTime value={entry.startedAt} />
      </td>
      <td>
        <DateTime value={entry.finishedAt} />
      </td>
      <td>
        <DateTime value={entry.expiresAt} />
      </td>
    </tr>
  )
}

/** Names for the ids a log entry holds: the organization's workspaces (as the key sees them) and the key workspace's flows. */
function useNames() {
  const workspaces = useAsync(() => unwrap(api.GET('/v1/workspaces', { params: { query: { size: 100 } } })), [])
  const flows = useAsync(() => unwrap(api.GET('/v1/flows', { params: { query: { size: 100 } } })), [])
  return {
    workspaces: new Map((workspaces.data?.content ?? []).map((w) => [w.id, w.name])),
    flows: new Map((flows.data?.content ?? []).map((f) => [f.id, f.name])),
  }
}

function FilterForm({ filters, workspaces, onApply }: { filters: Filters; workspaces: Map<string, string>; onApply(filters: Filters): void }) {
  const t = useT()
  const [draft, setDraft] = useState(filters)
  const [sessionIdError, setSessionIdError] = useState<string>()
  const set = (name: keyof Filters) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value })
  const change = (name: keyof Filters) => (value: string) => setDraft({ ...draft, [name]: value })

  function submit(event: FormEvent) {
    event.preventDefault()
    const sessionId = draft.sessionId.trim()
    if (sessionId && !isUuid(sessionId)) {
      setSessionIdError(t('sessions.filter.sessionIdInvalid'))
      return
    }
    setSessionIdError(undefined)
    onApply({ ...draft, sessionId })
  }

  const clear = Object.fromEntries(FILTERS.map((name) => [name, ''])) as Filters
  return (
    <form className="filters sessions-filters" role="search" aria-label={t('common.filters')} onSubmit={submit}>
      <SelectField label={t('sessions.filter.kind')} value={draft.preview} onChange={change('preview')} blank={t('sessions.filter.kindSessions')} options={[{ value: 'true', label: t('sessions.filter.kindPreviews') }]} />
      <SelectField label={t('sessions.field.workspace')} value={draft.workspaceId} onChange={change('workspaceId')} blank={t('sessions.filter.any')} options={[...workspaces].map(([id, name]) => ({ value: id, label: name }))} />
      <SelectField label={t('sessions.field.status')} value={draft.status} onChange={change('status')} blank={t('sessions.filter.any')} options={LOG_STATUSES.map((status) => ({ value: status, label: t(`sessions.status.${status}`) }))} />
      <SelectField label={t('sessions.filter.dateRange')} value={draft.dateRange} onChange={change('dateRange')} blank={t('sessions.filter.anyTime')} options={DATE_RANGES.map((range) => ({ value: range, label: t(`sessions.dateRange.${range}`) }))} />
      <Field label={t('sessions.filter.sessionId')} error={sessionIdError}>
        {(props) => <input {...props} className="mono" value={draft.sessionId} onChange={set('sessionId')} spellCheck={false} />}
      </Field>
      <SelectField label={t('sessions.filter.orderBy')} value={draft.orderBy} onChange={change('orderBy')} blank={t('sessions.filter.defaultOrder')} options={LOG_ORDER_COLUMNS.map((column) => ({ value: column, label: t(`sessions.field.${column}`) }))} />
      <SelectField label={t('sessions.filter.direction')} value={draft.direction || 'ASC'} onChange={change('direction')} options={DIRECTIONS.map((direction) => ({ value: direction, label: t(`sessions.direction.${direction}`) }))} />
      <SelectField label={t('pager.size')} value={draft.size || PAGE_SIZES[0]} onChange={change('size')} options={PAGE_SIZES.map((size) => ({ value: String(size), label: size }))} />
      <div className="sessions-filter-actions">
        <button type="submit">{t('common.apply')}</button>
        <button type="button" className="secondary" onClick={() => onApply(clear)}>
          {t('common.clear')}
        </button>
      </div>
    </form>
  )
}
