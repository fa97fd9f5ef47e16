import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, Empty, ErrorNotice, Loading, PageHeader, Pager } from '../../components/ui'
import { useT } from '../../i18n'
import { pageOf, useQueryParams } from '../../components/address'
import { StageChip } from './StageChip'

const PAGE_SIZE = 20

/** The workspace's pipelines: each opens its board or its definition. */
export function PipelinesScreen() {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const page = pageOf(params)
  const pipelines = useAsync(() => unwrap(api.GET('/v1/kanban/pipelines', { params: { query: { page, size: PAGE_SIZE } } })), [page])

  return (
    <section>
      <PageHeader title={t('kanban.pipelines.title')}>
        <Link href="/new" className="button-link">
          {t('kanban.pipelines.new')}
        </Link>
      </PageHeader>
      {pipelines.error && <ErrorNotice error={pipelines.error} onRetry={pipelines.reload} />}
      {!pipelines.data && !pipelines.error && <Loading />}
      {pipelines.data && pipelines.data.content.length === 0 && <Empty>{t('kanban.pipelines.empty')}</Empty>}
      {pipelines.data && pipelines.data.content.length > 0 && (
        <>
          <table className="kanban-table">
            <thead>
              <tr>
                <th scope="col">{t('common.name')}</th>
                <th scope="col">{t('kanban.pipelines.stages')}</th>
                <th scope="col">{t('kanban.pipelines.fields')}</th>
                <th scope="col">{t('common.updatedAt')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {pipelines.data.content.map((pipeline) => (
                <tr key={pipeline.id}>
                  <td>
                    <Link href={`/${pipeline.id}`}>{pipeline.name}</Link>
                  </td>
                  <td>
                    <ul className="kanban-chips">
                      {pipeline.stages.map((stage) => (
                        <li key={stage.id}>
                          <StageChip stage={stage} />
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>{pipeline.fields.map((field) => field.name).join(', ') || t('common.none')}</td>
                  <td>
                    <DateTime value={pipeline.updatedAt} />
                  </td>
                  <td>
                    <div className="kanban-actions">
                      <Link href={`/${pipeline.id}`} aria-label={t('kanban.pipelines.openBoardOf', { name: pipeline.name })}>
                        {t('kanban.pipelines.openBoard')}
                      </Link>
                      <Link href={`/${pipeline.id}/edit`} aria-label={t('kanban.pipelines.editOf', { name: pipeline.name })}>
                        {t('kanban.pipelines.edit')}
                      </Link>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={pipelines.data.totalPages} totalElements={pipelines.data.totalElements} onPage={(next) => setParams({ page: String(next) })} />
        </>
      )}
    </section>
  )
}
