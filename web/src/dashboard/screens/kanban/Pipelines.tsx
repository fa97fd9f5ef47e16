import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime, PageHeader } from '../../components/ui'
import { useT } from '../../i18n'
import type { Pipeline } from './api-types'
import { StageChip } from './StageChip'

const PAGE_SIZE = 20

/** The workspace's pipelines: each opens its board or its definition. */
export function PipelinesScreen() {
  const t = useT()
  const pipelines = usePagedList(({ page }) => unwrap(api.GET('/v1/kanban/pipelines', { params: { query: { page, size: PAGE_SIZE } } })), [])

  const columns: Column<Pipeline>[] = [
    { header: t('common.name'), cell: (pipeline) => <Link href={`/${pipeline.id}`}>{pipeline.name}</Link> },
    {
      header: t('kanban.pipelines.stages'),
      cell: (pipeline) => (
        <ul className="kanban-chips">
          {pipeline.stages.map((stage) => (
            <li key={stage.id}>
              <StageChip stage={stage} />
            </li>
          ))}
        </ul>
      ),
    },
    { header: t('kanban.pipelines.fields'), cell: (pipeline) => pipeline.fields.map((field) => field.name).join(', ') || t('common.none') },
    { header: t('common.updatedAt'), cell: (pipeline) => <DateTime value={pipeline.updatedAt} /> },
    {
      header: t('common.actions'),
      cell: (pipeline) => (
        <div className="kanban-actions">
          <Link href={`/${pipeline.id}`} aria-label={t('kanban.pipelines.openBoardOf', { name: pipeline.name })}>
            {t('kanban.pipelines.openBoard')}
          </Link>
          <Link href={`/${pipeline.id}/edit`} aria-label={t('kanban.pipelines.editOf', { name: pipeline.name })}>
            {t('kanban.pipelines.edit')}
          </Link>
        </div>
      ),
    },
  ]

  return (
    <section>
      <PageHeader title={t('kanban.pipelines.title')}>
        <Link href="/new" className="button-link">
          {t('kanban.pipelines.new')}
        </Link>
      </PageHeader>
      <ListView
        list={pipelines}
        empty={{ title: t('kanban.pipelines.empty'), hint: t('kanban.pipelines.emptyHint') }}
        rowKey={(pipeline) => pipeline.id}
        columns={columns}
      />
    </section>
  )
}
