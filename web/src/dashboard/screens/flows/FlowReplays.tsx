import { useEffect, useState, type FormEvent } from 'react'
import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { isUuid, useQueryParams } from '../../components/address'
import { useAsync } from '../../components/async'
import { ListView, type Column } from '../../components/ListView'
import { useNodeNames } from '../../components/NodeName'
import { usePagedList } from '../../components/paged-list'
import { shortId } from '../../components/short-id'
import { DateTime, ErrorNotice, Loading, SelectField } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import { ChatTranscript } from '../../../shared/chat-transcript'
import { dateTimeText } from '../../../shared/date-time'
import { sessionStateKey } from '../sessions/session-state'
import { useSubmit } from '../workspaces/forms'
import { REPLAY_SESSIONS, type DifferingSession, type FlowDetail, type ReplayDetail, type ReplayStatusChoice, type ReplaySummary, type TurnSide } from './api-types'
import { functionsWords, missingWords, turnStateWords, turnWords } from './replay-words'
import { WholeNumberField, wholeNumberOf } from './WholeNumberField'

/** How often a running replay's progress is asked for. */
const POLL_MS = 1000
/** Differing sessions shown at first, and added by each Show more. */
const SHOWN_AT_ONCE = 20
const STATUSES: readonly ReplayStatusChoice[] = ['running', 'completed', 'timeout', 'error']

/**
 * Replays of the flow's real sessions against its draft: a form to start one, the report of the
 * one the address names (`?replay=`), polled while it runs, and the flow's earlier replays.
 */
export function FlowReplays({ flow }: { flow: FlowDetail }) {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const asked = params.get('replay') ?? ''
  const shown = isUuid(asked) ? asked : undefined
  const replays = usePagedList(({ page }) => unwrap(api.GET('/v1/flows/{id}/replays', { params: { path: { id: flow.id }, query: { page, size: 10 } } })), [flow.id], 'replaysPage')
  const columns: Column<ReplaySummary>[] = [
    {
      header: t('replays.col.asked'),
      namesRow: true,
      cell: (replay) => <DateTime value={replay.requestedAt} />,
    },
    { header: t('replays.col.version'), cell: (replay) => t('flows.flow.versionNumber', { version: replay.version }) },
    {
      header: t('replays.col.status'),
      cell: (replay) => <span className={`badge ${replay.status === 'running' ? 'warn' : 'ok'}`}>{t(`replays.status.${replay.status}`)}</span>,
    },
    { header: t('replays.col.checked'), cell: (replay) => t('replays.checkedOf', { checked: replay.checked, total: replay.total }) },
    { header: t('replays.col.differing'), cell: (replay) => replay.differingCount },
    {
      header: t('common.actions'),
      cell: (replay) =>
        replay.id === shown ? (
          <span className="hint">{t('replays.shown')}</span>
        ) : (
          <Link href={`/${flow.id}?${new URLSearchParams({ ...(replays.page ? { replaysPage: String(replays.page) } : {}), replay: replay.id })}`} aria-label={`${t('replays.open')}: ${dateTimeText(replay.requestedAt)}`}>
            {t('replays.open')}
          </Link>
        ),
    },
  ]
  return (
    <section className="card replays" aria-labelledby="replays-title">
      <h2 id="replays-title">{t('replays.title')}</h2>
      <p className="hint">{t('replays.intro')}</p>
      <ReplayForm
        flow={flow}
        onStarted={(replayId) => {
          setParams({ replay: replayId, replaysPage: undefined })
          replays.reload()
        }}
      />
      {shown && <ReplayReport key={shown} flow={flow} replayId={shown} onProgress={replays.reload} onClose={() => setParams({ replay: undefined })} />}
      <h3 className="replays-list-title">{t('replays.list.title')}</h3>
      <ListView
        list={replays}
        empty={t('replays.list.none')}
        caption={(found) => t('replays.list.caption', { total: found.totalElements })}
        className="replays-table"
        rowKey={(replay) => replay.id}
        current={shown}
        columns={columns}
      />
    </section>
  )
}

function ReplayForm({ flow, onStarted }: { flow: FlowDetail; onStarted(replayId: string): void }) {
  const t = useT()
  const [version, setVersion] = useState(flow.release.liveVersion)
  const [last, setLast] = useState(String(REPLAY_SESSIONS.unlessTold))
  const [status, setStatus] = useState<ReplayStatusChoice | ''>('')
  const [tried, setTried] = useState(false)
  const submit = useSubmit()
  const count = wholeNumberOf(last, REPLAY_SESSIONS.most)
  const versions = Array.from({ length: flow.publishedVersion }, (_, index) => flow.publishedVersion - index)

  const start = (event: FormEvent) => {
    event.preventDefault()
    setTried(true)
    if (count === undefined) return
    void submit.run(async () => {
      const body = { version, sessions: { last: count, ...(status ? { status } : {}) } }
      const { replayId } = await unwrap(api.POST('/v1/flows/{id}/replays', { params: { path: { id: flow.id } }, body }))
      onStarted(replayId)
    })
  }

  return (
    <form className="replays-form" aria-label={t('replays.form.title')} noValidate onSubmit={start}>
      <div className="form-row">
        <SelectField
          label={t('replays.form.version')}
          value={version}
          onChange={(value) => setVersion(Number(value))}
          options={versions.map((item) => ({
            value: String(item),
            label: item === flow.release.liveVersion ? t('releases.option.live', { version: item }) : t('flows.flow.versionNumber', { version: item }),
          }))}
        />
        <WholeNumberField
          label={t('replays.form.last')}
          hint={t('replays.form.lastHint', { most: new Intl.NumberFormat(t('api.numberLocale')).format(REPLAY_SESSIONS.most) })}
          value={last}
          onChange={setLast}
          most={REPLAY_SESSIONS.most}
          error={tried && count === undefined ? t('replays.form.lastInvalid', { most: new Intl.NumberFormat(t('api.numberLocale')).format(REPLAY_SESSIONS.most) }) : undefined}
        />
        <SelectField
          label={t('replays.form.status')}
          hint={t('replays.form.statusHint')}
          value={status}
          onChange={(value) => setStatus(STATUSES.find((choice) => choice === value) ?? '')}
          blank={t('replays.form.anyStatus')}
          options={STATUSES.map((choice) => ({ value: choice, label: t(sessionStateKey(choice)) }))}
        />
      </div>
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? t('replays.form.submitting') : t('replays.form.submit')}
      </button>
      {submit.error !== undefined && <ErrorNotice error={submit.error} />}
    </form>
  )
}

/** Which sessions a replay chose, in words: "The newest 200 of version 1, with status Completed". */
function selectionWords(replay: ReplayDetail, t: Translate): string {
  const { selection, version } = replay
  const words = [
    t('replays.selection.last', { last: selection.last ?? REPLAY_SESSIONS.unlessTold, version }),
    ...(selection.status ? [t('replays.selection.status', { status: t(sessionStateKey(selection.status)) })] : []),
    ...(selection.from ? [t('replays.selection.from', { from: dateTimeText(selection.from) })] : []),
    ...(selection.to ? [t('replays.selection.to', { to: dateTimeText(selection.to) })] : []),
  ].join(', ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

function progressWords(replay: ReplayDetail, t: Translate): string {
  const { checked, total, differingCount: differing, version } = replay
  if (replay.status === 'running') return t('replays.running', { checked, total, differing })
  if (total === 0) return t('replays.finished.none', { version })
  return differing === 0 ? t('replays.finished.same', { total }) : t('replays.finished.differ', { differing, total })
}

/** A replay's progress, asked for again while it runs, and its differing sessions. */
function ReplayReport({ flow, replayId, onProgress, onClose }: { flow: FlowDetail; replayId: string; onProgress(): void; onClose(): void }) {
  const t = useT()
  const report = useAsync(() => unwrap(api.GET('/v1/flows/{id}/replays/{replayId}', { params: { path: { id: flow.id, replayId } } })), [flow.id, replayId])
  const [shownCount, setShownCount] = useState(SHOWN_AT_ONCE)
  const replay = report.data
  const { reload } = report

  useEffect(() => {
    if (replay?.status !== 'running') return
    const timer = setTimeout(reload, POLL_MS)
    return () => clearTimeout(timer)
  }, [replay, reload])
  const progressed = replay ? `${replay.status} ${replay.checked}` : ''
  useEffect(() => {
    if (progressed) onProgress()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [progressed])

  return (
    <section className="replay-report" aria-labelledby="replay-report-title">
      <div className="flows-version-head">
        <h3 id="replay-report-title">{replay ? t('replays.report.title', { version: replay.version }) : t('replays.form.title')}</h3>
        <button type="button" className="secondary" onClick={onClose}>
          {t('common.close')}
        </button>
      </div>
      {report.error && <ErrorNotice error={report.error} onRetry={reload} />}
      {!replay && !report.error && <Loading />}
      {replay && (
        <>
          <dl className="flows-facts">
            <dt>{t('replays.report.asked')}</dt>
            <dd>
              <DateTime value={replay.requestedAt} />
            </dd>
            <dt>{t('replays.report.sessions')}</dt>
            <dd>{selectionWords(replay, t)}</dd>
            {replay.finishedAt && (
              <>
                <dt>{t('replays.report.finishedAt')}</dt>
                <dd>
                  <DateTime value={replay.finishedAt} />
                </dd>
              </>
            )}
          </dl>
          {replay.draftVersion !== flow.draftVersion && <p className="notice warn">{t('replays.draftChanged')}</p>}
          <progress className="replay-progress" value={replay.checked} max={Math.max(replay.total, 1)} aria-label={t('replays.progress')} />
          <p role="status" className={replay.status === 'finished' ? `notice ${replay.differingCount === 0 ? 'ok' : 'warn'}` : 'replay-running'} data-testid="replay-progress">
            {progressWords(replay, t)}
            {replay.differingCount > replay.differing.length && ` ${t('replays.kept', { kept: replay.differing.length })}`}
          </p>
          {replay.differing.slice(0, shownCount).map((session) => (
            <DifferingTurn key={session.sessionId} session={session} definition={flow.definition} />
          ))}
          {replay.differing.length > shownCount && (
            <button type="button" className="secondary" onClick={() => setShownCount((count) => count + SHOWN_AT_ONCE)}>
              {t('replays.showMore', { count: Math.min(SHOWN_AT_ONCE, replay.differing.length - shownCount) })}
            </button>
          )}
        </>
      )}
    </section>
  )
}

/** A differing session's first differing turn: what the bot said as recorded and on the draft, and each other thing that differs. */
function DifferingTurn({ session, definition }: { session: DifferingSession; definition: FlowDetail['definition'] }) {
  const t = useT()
  const names = useNodeNames(definition)
  const headingId = `replay-session-${session.sessionId}`
  const { recorded, replayed } = session
  const waitsAt = (side: TurnSide) => (side.waitsAt === null ? t('replays.waitsNowhere') : names(side.waitsAt).name)
  const rows: { key: string; label: string; of(side: TurnSide): string }[] = [
    { key: 'status', label: t('replays.row.status'), of: (side) => turnStateWords(side.status, t) },
    { key: 'waitsAt', label: t('replays.row.waitsAt'), of: waitsAt },
    { key: 'functions', label: t('replays.row.functions'), of: (side) => functionsWords(side.functions, t) },
  ]
  return (
    <article className="replay-session" aria-labelledby={headingId}>
      <h4 id={headingId}>
        <Link href={`~/dashboard/sessions/${session.sessionId}`}>{t('replays.session', { id: shortId(session.sessionId) })}</Link>
      </h4>
      <table className="replay-diff">
        <caption>{turnWords(session, t)}</caption>
        <thead>
          <tr>
            <th scope="col">{t('replays.col.what')}</th>
            <th scope="col">{t('replays.col.recorded')}</th>
            <th scope="col">{t('replays.col.draft')}</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">{t('replays.row.said')}</th>
            <td className="replay-recorded">
              <Said said={recorded.said} />
            </td>
            <td className="replay-draft">{replayed ? <Said said={replayed.said} /> : <p className="notice warn">{missingWords(session.missing, t, (id) => names(id).name)}</p>}</td>
          </tr>
          {replayed &&
            rows
              .filter((row) => row.of(recorded) !== row.of(replayed))
              .map((row) => (
                <tr key={row.key}>
                  <th scope="row">{row.label}</th>
                  <td className="replay-recorded">{row.of(recorded)}</td>
                  <td className="replay-draft">{row.of(replayed)}</td>
                </tr>
              ))}
        </tbody>
      </table>
    </article>
  )
}

/** What the bot said on one side of a turn, as the chat draws it. */
function Said({ said }: { said: readonly string[] }) {
  const t = useT()
  if (said.length === 0) return <p className="hint">{t('replays.saidNothing')}</p>
  return <ChatTranscript className="replay-said" t={t} entries={said.map((text, index) => ({ kind: 'bot', key: String(index), message: { type: 'text', text: { body: text } } }))} />
}
