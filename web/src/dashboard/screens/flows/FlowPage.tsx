import { useState } from 'react'
import { Link, useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { CopyButton, DateTime, ErrorNotice, Loading } from '../../components/ui'
import { useT } from '../../i18n'
import { positiveOf, useQueryParams } from '../../components/address'
import { FlowHeader, useFlow } from './FlowHeader'
import { FlowRelease, ShareBadge } from './FlowRelease'
import { FlowReplays } from './FlowReplays'
import { FlowTests } from './FlowTests'
import type { FlowDetail, Release, VersionDetail, VersionItem } from './api-types'
import { definitionSummary, draftDiffers, flowOrder } from './definition'
import { StartSessionForm } from '../sessions/StartSession'
import { nodeTypeName } from '../../../shared/node-names'
import { usePreferences } from '../../preferences'
import { VersionsCompared } from './VersionsCompared'
import { WholeNumberField, wholeNumberOf } from './WholeNumberField'

/**
 * A flow: its state (draft against the newest version) and publishing, its release (which version
 * new sessions start on), its versions side by side, its conversation tests and replays against
 * the draft, a session to start, and its published versions.
 */
export function FlowScreen() {
  const t = useT()
  const { id } = useParams<{ id: string }>()
  const flow = useFlow(id)
  return (
    <section>
      <FlowHeader id={id} title={flow.data?.name ?? t('flows.flow.title')}>
        <Link className="button-link" href={`/${id}/edit`}>
          {t('flows.openEditor')}
        </Link>
      </FlowHeader>
      {flow.error && <ErrorNotice error={flow.error} onRetry={flow.reload} />}
      {!flow.data && !flow.error && <Loading />}
      {flow.data && (
        <>
          <FlowState flow={flow.data} onPublished={flow.reload} />
          <FlowRelease flow={flow.data} onChanged={flow.reload} />
          <VersionsCompared flow={flow.data} />
          <FlowTests flow={flow.data} />
          <FlowReplays flow={flow.data} />
          <div className="card" aria-labelledby="flows-start-title">
            <h2 id="flows-start-title">{t('sessions.start.title')}</h2>
            <StartSessionForm flow={flow.data} />
          </div>
          <Versions flowId={id} newest={flow.data.publishedVersion} release={flow.data.release} />
        </>
      )}
    </section>
  )
}

function FlowState({ flow, onPublished }: { flow: FlowDetail; onPublished(): void }) {
  const t = useT()
  const newest = useAsync(
    () => unwrap(api.GET('/v1/flows/{id}/versions/{version}', { params: { path: { id: flow.id, version: flow.publishedVersion } } })),
    [flow.id, flow.publishedVersion],
  )
  const [publishing, setPublishing] = useState(false)
  const [published, setPublished] = useState<{ version: number; percent: number }>()
  const [error, setError] = useState<unknown>()
  const [share, setShare] = useState('100')
  const percent = wholeNumberOf(share, 100)
  const changed = newest.data ? draftDiffers(flow.definition, newest.data.definition) : undefined

  async function publish() {
    if (percent === undefined) return
    setPublishing(true)
    setError(undefined)
    try {
      const { version } = await unwrap(api.POST('/v1/flows/{id}/publish', { params: { path: { id: flow.id } }, body: percent < 100 ? { percent } : {} }))
      setPublished({ version, percent })
      onPublished()
    } catch (failure) {
      setError(failure)
    } finally {
      setPublishing(false)
    }
  }

  return (
    <div className="card flows-state" aria-labelledby="flows-state-title">
      <h2 id="flows-state-title">{t('flows.flow.state')}</h2>
      <dl className="flows-facts">
        <dt>{t('flows.field.workspace')}</dt>
        <dd>{flow.workspace.name}</dd>
        <dt>{t('common.id')}</dt>
        <dd>
          <span className="mono">{flow.id}</span> <CopyButton value={flow.id} label={t('common.id')} />
        </dd>
        <dt>{t('common.createdAt')}</dt>
        <dd>
          <DateTime value={flow.createdAt} />
        </dd>
        <dt>{t('common.updatedAt')}</dt>
        <dd>
          <DateTime value={flow.updatedAt} />
        </dd>
        <dt>{t('flows.flow.published')}</dt>
        <dd>{t('flows.flow.versionNumber', { version: flow.publishedVersion })}</dd>
        <dt>{t('flows.flow.draft')}</dt>
        <dd data-testid="draft-state">
          {changed === undefined ? (
            t('common.loading')
          ) : changed ? (
            <span className="badge warn">{t('flows.flow.draftChanged')}</span>
          ) : (
            <span className="badge ok">{t('flows.flow.draftSame', { version: flow.publishedVersion })}</span>
          )}
        </dd>
      </dl>
      {newest.error && <ErrorNotice error={newest.error} onRetry={newest.reload} />}
      <div className="flows-publish-share">
        <WholeNumberField
          label={t('releases.publish.percent')}
          hint={t('releases.publish.percentHint', { live: flow.release.liveVersion })}
          value={share}
          onChange={setShare}
          most={100}
          error={percent === undefined ? t('releases.publish.percentInvalid') : undefined}
        />
      </div>
      <div className="flows-publish">
        <button type="button" onClick={() => void publish()} disabled={publishing || changed !== true || percent === undefined}>
          {publishing ? t('flows.flow.publishing') : t('flows.flow.publish')}
        </button>
        <p className="hint">{changed === false ? t('flows.flow.nothingToPublish') : t('flows.flow.publishHint')}</p>
      </div>
      <p role="status" className="flows-status">
        {published !== undefined &&
          (published.percent < 100 ? t('releases.publish.doneGradual', published) : t('flows.flow.publishedNow', { version: published.version }))}
      </p>
      {error !== undefined && <ErrorNotice error={error} />}
    </div>
  )
}

function Versions({ flowId, newest, release }: { flowId: string; newest: number; release: Release }) {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const shown = positiveOf(params, 'version')
  const versions = usePagedList(
    ({ page }) => unwrap(api.GET('/v1/flows/{id}/versions', { params: { path: { id: flowId }, query: { page, size: 10 } } })),
    [flowId, newest, release.liveVersion, release.gradual?.version, release.gradual?.percent],
  )
  const columns: Column<VersionItem>[] = [
    {
      header: t('flows.versions.version'),
      namesRow: true,
      cell: (version) => (
        <>
          {t('flows.flow.versionNumber', { version: version.version })}
          {version.version === newest && <span className="badge ok flows-newest">{t('flows.versions.newest')}</span>}
        </>
      ),
    },
    { header: t('flows.versions.publishedAt'), cell: (version) => <DateTime value={version.publishedAt} /> },
    { header: t('releases.col.share'), cell: (version) => <ShareBadge release={release} version={version.version} share={version.share} /> },
    {
      header: t('common.actions'),
      cell: (version) => (
        <Link href={`/${flowId}?${new URLSearchParams({ ...(versions.page ? { page: String(versions.page) } : {}), version: String(version.version) })}`}>
          {t('flows.versions.view', { version: version.version })}
        </Link>
      ),
    },
  ]
  return (
    <div className="card" aria-labelledby="flows-versions-title">
      <h2 id="flows-versions-title">{t('flows.versions.title')}</h2>
      <ListView
        list={versions}
        caption={(found) => t('flows.versions.caption', { total: found.totalElements })}
        className="flows-versions"
        rowKey={(version) => String(version.version)}
        current={shown === undefined ? undefined : String(shown)}
        columns={columns}
      />
      {shown !== undefined && <VersionSummary flowId={flowId} version={shown} onClose={() => setParams({ version: undefined })} />}
    </div>
  )
}

function VersionSummary({ flowId, version, onClose }: { flowId: string; version: number; onClose(): void }) {
  const t = useT()
  const detail = useAsync(() => unwrap(api.GET('/v1/flows/{id}/versions/{version}', { params: { path: { id: flowId, version } } })), [flowId, version])
  return (
    <section className="flows-version" aria-labelledby="flows-version-title">
      <div className="flows-version-head">
        <h3 id="flows-version-title">{t('flows.version.title', { version })}</h3>
        <button type="button" className="secondary" onClick={onClose}>
          {t('common.close')}
        </button>
      </div>
      {detail.error && <ErrorNotice error={detail.error} onRetry={detail.reload} />}
      {!detail.data && !detail.error && <Loading />}
      {detail.data && <DefinitionSummary version={detail.data} />}
    </section>
  )
}

function DefinitionSummary({ version }: { version: VersionDetail }) {
  const t = useT()
  const { lang } = usePreferences()
  const summary = definitionSummary(version.definition)
  const byId = new Map(version.definition.nodes.map((node) => [node.id, node]))
  return (
    <>
      <p>
        {t('flows.version.publishedAt')} <DateTime value={version.publishedAt} /> · {t('flows.version.counts', { nodes: summary.nodes, edges: summary.edges })}
      </p>
      <ul className="flows-types" aria-label={t('flows.version.byType')}>
        {summary.byType.map(([type, count]) => (
          <li key={type} className="badge">
            {nodeTypeName(type, lang)} × {count}
          </li>
        ))}
      </ul>
      <ol className="flows-node-list" aria-label={t('flows.version.nodesInOrder')}>
        {flowOrder(version.definition).map((nodeId) => (
          <li key={nodeId}>
            <span className="mono">{nodeId}</span> <span className="hint">{nodeTypeName(byId.get(nodeId)?.type ?? '', lang)}</span>
          </li>
        ))}
      </ol>
      <details>
        <summary>{t('flows.version.json')}</summary>
        <pre className="snippet" tabIndex={0}>
          {JSON.stringify(version.definition, null, 2)}
        </pre>
      </details>
    </>
  )
}
