import { api, unwrap } from '../../api'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import type { FlowDetail, ReleaseChange } from './api-types'
import { releaseChangeWords } from './release-words'

/** Changes a page of the history shows. */
const SIZE = 5

interface Row {
  /** Its place in the history, newest first (changes carry no id). */
  position: number
  change: ReleaseChange
  /** The change before it, which its sentence may need (see releaseChangeWords). */
  before?: ReleaseChange
}

/** Which changes' sentences read the change before them. */
const readsBefore = (change: ReleaseChange | undefined) => change?.reason === 'rollback' || change?.reason === 'halt'

async function historyPage(flowId: string, page: number) {
  const list = (query: { page: number; size: number }) => unwrap(api.GET('/v1/flows/{id}/releases', { params: { path: { id: flowId }, query } }))
  const found = await list({ page, size: SIZE })
  const { content } = found
  // The change before a page's last one opens the next page: asked for alone, as the page of one at its index.
  const next = (page + 1) * SIZE
  const following = readsBefore(content.at(-1)) && next < found.totalElements ? (await list({ page: next, size: 1 })).content[0] : undefined
  return { ...found, content: content.map((change, index): Row => ({ position: page * SIZE + index, change, before: content[index + 1] ?? following })) }
}

/**
 * The flow's release history, newest first, a page at a time (`?releasesPage=`): each change in a
 * sentence with its date and time. It loads again when the flow's release or versions change.
 */
export function ReleaseHistory({ flow }: { flow: FlowDetail }) {
  const t = useT()
  const { liveVersion, gradual } = flow.release
  const changes = usePagedList(({ page }) => historyPage(flow.id, page), [flow.id, flow.publishedVersion, flow.updatedAt, liveVersion, gradual?.version, gradual?.percent], 'releasesPage')
  const columns: Column<Row>[] = [
    { header: t('releases.history.when'), namesRow: true, className: 'releases-history-when', cell: (row) => <DateTime value={row.change.changedAt} /> },
    { header: t('releases.history.change'), cell: (row) => releaseChangeWords(row.change, row.before, t) },
  ]
  return (
    <section className="releases-history" aria-labelledby="releases-history-title">
      <h3 id="releases-history-title" className="releases-change">
        {t('releases.history.title')}
      </h3>
      <ListView
        list={changes}
        empty={t('releases.history.none')}
        caption={(found) => t('releases.history.caption', { total: found.totalElements })}
        className="releases-history-table"
        rowKey={(row) => String(row.position)}
        columns={columns}
      />
    </section>
  )
}
