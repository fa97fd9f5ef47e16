import { useRef, useState, type FormEvent } from 'react'
import { api, unwrap } from '../../api'
import { ErrorNotice, SelectField } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import { ConfirmAction, useSubmit } from '../workspaces/forms'
import type { FlowDetail, Release } from './api-types'
import { ReleaseHistory } from './ReleaseHistory'
import { WholeNumberField, wholeNumberOf } from './WholeNumberField'
import './releases.css'

/** The percent of new sessions the live version takes: what the version in gradual release leaves it. */
export const liveShare = (release: Release): number => 100 - (release.gradual?.percent ?? 0)

/** A version's share of new sessions now (`share`, as the API counts it), marked when it is the live one or the one in gradual release. */
export function ShareBadge({ release, version, share }: { release: Release; version: number; share: number }) {
  const t = useT()
  return (
    <span className="releases-share-cell">
      {t('releases.percent', { percent: share })}
      {version === release.liveVersion && <span className="badge ok">{t('releases.badge.live')}</span>}
      {version === release.gradual?.version && <span className="badge warn">{t('releases.badge.gradual')}</span>}
    </span>
  )
}

/** Published versions are numbered from 1 on: the newest first. */
const newestFirst = (newest: number): number[] => Array.from({ length: newest }, (_, index) => newest - index)

function versionOption(version: number, flow: FlowDetail, t: Translate): string {
  const { liveVersion, gradual } = flow.release
  if (version === liveVersion) return t('releases.option.live', { version })
  if (version === gradual?.version) return t('releases.option.gradual', { version, percent: gradual.percent })
  return version === flow.publishedVersion ? t('releases.option.newest', { version }) : t('flows.flow.versionNumber', { version })
}

/**
 * Which version new sessions start on: the live one and the one in gradual release with their
 * shares, and, for a chosen version, a rollback to it, a share of new sessions, a promotion to all
 * of them or the end of its release; then the history of these changes. `onChanged` reloads the
 * flow, whose `release` this shows.
 */
export function FlowRelease({ flow, onChanged }: { flow: FlowDetail; onChanged(): void }) {
  const t = useT()
  const { release } = flow
  const { liveVersion, gradual } = release
  const [chosen, setChosen] = useState(() => gradual?.version ?? (flow.publishedVersion !== liveVersion ? flow.publishedVersion : liveVersion))
  const [announced, setAnnounced] = useState('')
  const status = useRef<HTMLParagraphElement>(null)
  const changed = (words: string) => {
    setAnnounced(words)
    onChanged()
    // The control pressed goes away with the change: the keyboard lands on what it did.
    status.current?.focus()
  }

  return (
    <section className="card releases" aria-labelledby="releases-title">
      <h2 id="releases-title">{t('releases.title')}</h2>
      <p className="hint">{t('releases.intro')}</p>
      <div className="releases-bar" aria-hidden="true">
        <span className="releases-bar-live" style={{ flexGrow: liveShare(release) }} />
        {gradual && <span className="releases-bar-gradual" style={{ flexGrow: gradual.percent }} />}
      </div>
      <dl className="flows-facts">
        <dt>{t('releases.live')}</dt>
        <dd data-testid="live-version">
          <span className="releases-swatch live" aria-hidden="true" />
          {t('releases.takes', { version: liveVersion, percent: liveShare(release) })}
        </dd>
        <dt>{t('releases.gradual')}</dt>
        <dd data-testid="gradual-release">
          {gradual ? (
            <>
              <span className="releases-swatch gradual" aria-hidden="true" />
              {t('releases.takes', { version: gradual.version, percent: gradual.percent })}
            </>
          ) : (
            t('releases.gradualNone')
          )}
        </dd>
      </dl>
      <h3 className="releases-change">{t('releases.change')}</h3>
      <SelectField
        label={t('releases.version')}
        value={chosen}
        onChange={(value) => setChosen(Number(value))}
        options={newestFirst(flow.publishedVersion).map((version) => ({ value: String(version), label: versionOption(version, flow, t) }))}
      />
      <VersionRelease key={chosen} flow={flow} version={chosen} onChanged={changed} />
      <p role="status" ref={status} tabIndex={-1} className="releases-status">
        {announced}
      </p>
      <ReleaseHistory flow={flow} />
    </section>
  )
}

/** What can be done with one version: nothing for the live one; a share, then a promotion or an end, or a rollback for the others. */
function VersionRelease({ flow, version, onChanged }: { flow: FlowDetail; version: number; onChanged(words: string): void }) {
  const t = useT()
  const { release } = flow
  const { liveVersion: live, gradual } = release
  const inGradual = gradual?.version === version
  const [typed, setTyped] = useState(inGradual ? String(gradual.percent) : '')
  const [tried, setTried] = useState(false)
  const sharing = useSubmit()
  const stopping = useSubmit()
  const percent = wholeNumberOf(typed, 99)

  if (version === live) {
    return <p className="releases-about">{gradual ? t('releases.isLivePart', { version, percent: liveShare(release), gradual: gradual.version }) : t('releases.isLiveAll', { version })}</p>
  }

  const releaseTo = (share: number) => unwrap(api.POST('/v1/flows/{id}/release', { params: { path: { id: flow.id } }, body: { version, percent: share } }))
  const nowOn = gradual ? t('releases.now.split', { live, livePercent: liveShare(release), gradual: gradual.version, percent: gradual.percent }) : t('releases.now.one', { version: live })
  const share = (event: FormEvent) => {
    event.preventDefault()
    setTried(true)
    if (percent === undefined) return
    void sharing.run(async () => {
      await releaseTo(percent)
      onChanged(t('releases.done.released', { version, percent, live }))
    })
  }

  return (
    <>
      <p className="releases-about">{inGradual ? t('releases.isGradual', { version, percent: gradual.percent }) : t('releases.isOut', { version })}</p>
      <form className="releases-share" onSubmit={share} noValidate aria-label={t(inGradual ? 'releases.changeShare' : 'releases.releaseGradually', { version })}>
        <WholeNumberField
          label={t('releases.share')}
          hint={[t('releases.shareHint', { version, live }), gradual && !inGradual ? t('releases.shareReplaces', { gradual: gradual.version, percent: gradual.percent }) : ''].join(' ').trim()}
          value={typed}
          onChange={setTyped}
          most={99}
          error={tried && percent === undefined ? t('releases.shareInvalid') : undefined}
        />
        <button type="submit" disabled={sharing.busy}>
          {sharing.busy ? t('releases.saving') : t(inGradual ? 'releases.changeShare' : 'releases.releaseGradually', { version })}
        </button>
      </form>
      {sharing.error !== undefined && <ErrorNotice error={sharing.error} />}
      <div className="releases-actions">
        {inGradual ? (
          <>
            <ConfirmAction
              tone="plain"
              label={t('releases.promote', { version })}
              question={t('releases.confirm.promote', { version, live, livePercent: liveShare(release) })}
              onConfirm={async () => {
                await releaseTo(100)
                onChanged(t('releases.done.live', { version }))
              }}
            />
            <button
              type="button"
              className="secondary"
              disabled={stopping.busy}
              onClick={() =>
                void stopping.run(async () => {
                  await releaseTo(0)
                  onChanged(t('releases.done.stopped', { version, live }))
                })
              }
            >
              {t('releases.stop', { version })}
            </button>
          </>
        ) : (
          <ConfirmAction
            tone="plain"
            label={t(version < live ? 'releases.rollBack' : 'releases.makeLive', { version })}
            question={t(version < live ? 'releases.confirm.rollBack' : 'releases.confirm.makeLive', { version, now: nowOn })}
            onConfirm={async () => {
              await unwrap(api.POST('/v1/flows/{id}/rollback', { params: { path: { id: flow.id } }, body: { version } }))
              onChanged(t('releases.done.live', { version }))
            }}
          />
        )}
      </div>
      {stopping.error !== undefined && <ErrorNotice error={stopping.error} />}
    </>
  )
}
