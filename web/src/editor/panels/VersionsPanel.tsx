import { useEffect, useRef, useState } from 'react'
import { errorText } from '../../shared/api-problems'
import type { FlowApi, PublishedVersion, Release } from '../api'
import { Confirm } from '../dialogs/Confirm'
import type { FlowDefinition } from '../flow-definition'
import { useT } from '../i18n'

export interface VersionsPanelProps {
  api: FlowApi
  flowId: string
  /** The newest published version: the list is read again when it changes. */
  publishedVersion: number
  /** The version new sessions start on and any gradual release: the list is read again when it changes. */
  release: Release
  /** Loads a version's definition into the draft (the person saves it then). */
  onRestore(version: number, definition: FlowDefinition): void
  /** Makes a version the one new sessions start on; false when it failed. */
  onRollBack(version: number): Promise<boolean>
  /** Reads the release again, as the panel opens: someone may have changed it meanwhile. */
  onRefresh(): Promise<void>
}

/**
 * The flow's published versions, newest first, each with its date: which one is live, the share of
 * new sessions each takes during a gradual release, a way to make another live at once, and a way
 * back to one in the draft.
 */
export function VersionsPanel({ api, flowId, publishedVersion, release, onRestore, onRollBack, onRefresh }: VersionsPanelProps) {
  const t = useT()
  const [versions, setVersions] = useState<PublishedVersion[]>()
  const [failure, setFailure] = useState<unknown>()
  const [restoring, setRestoring] = useState<number>()
  const [asking, setAsking] = useState<number>()
  const [rollingBack, setRollingBack] = useState(false)
  const list = useRef<HTMLUListElement>(null)
  const { liveVersion, gradual } = release

  useEffect(() => {
    void onRefresh()
  }, [onRefresh])

  useEffect(() => {
    let current = true
    api.versions(flowId).then(
      (found) => current && setVersions(found),
      (error: unknown) => current && setFailure(error),
    )
    return () => {
      current = false
    }
  }, [api, flowId, publishedVersion, liveVersion, gradual?.version, gradual?.percent])

  const restore = async (version: number) => {
    setRestoring(version)
    setFailure(undefined)
    try {
      onRestore(version, await api.version(flowId, version))
    } catch (error) {
      setFailure(error)
    } finally {
      setRestoring(undefined)
    }
  }

  // The focus goes to the row's first button once its confirmation closes (the row's own button is gone when it became live).
  const refocus = (version: number) => requestAnimationFrame(() => list.current?.querySelector<HTMLButtonElement>(`[data-testid="version-${version}"] button`)?.focus())
  const rollBack = async (version: number) => {
    setRollingBack(true)
    const done = await onRollBack(version)
    setRollingBack(false)
    setAsking(undefined)
    if (done) refocus(version)
  }
  const cancel = (version: number) => {
    setAsking(undefined)
    refocus(version)
  }

  const date = new Intl.DateTimeFormat(t('versions.dateLocale'), { dateStyle: 'medium', timeStyle: 'short' })
  const percent = new Intl.NumberFormat(t('versions.dateLocale'), { style: 'percent' })
  return (
    <div className="versions-panel" data-testid="versions-panel">
      <h2>{t('versions.title')}</h2>
      <p className="hint">{t('versions.hint')}</p>
      {failure !== undefined && (
        <p className="field-error" role="alert">
          {t('status.failed', { message: errorText(failure, t) })}
        </p>
      )}
      {!versions && failure === undefined && <p className="muted">{t('versions.loading')}</p>}
      <ul className="version-list" ref={list}>
        {versions?.map(({ version, publishedAt, share }) => (
          <li key={version} data-testid={`version-${version}`} className={version === liveVersion ? 'live' : undefined}>
            <div className="version-line">
              <span>
                <strong id={`version-${version}-name`}>{t('versions.version', { version })}</strong>
                {version === liveVersion && (
                  <span className="badge live" data-testid="version-live">
                    {t('versions.live')}
                  </span>
                )}
                {version === gradual?.version && <span className="badge gradual">{t('versions.gradual')}</span>}
                <br />
                <time className="muted" dateTime={publishedAt}>
                  {date.format(new Date(publishedAt))}
                </time>
                {gradual && share > 0 && (
                  <span className="version-share" data-testid="version-share">
                    {t('versions.share', { share: percent.format(share / 100) })}
                  </span>
                )}
              </span>
              <span className="version-actions">
                {version !== liveVersion && (
                  <button type="button" className="secondary" aria-describedby={`version-${version}-name`} onClick={() => setAsking(version)} disabled={asking !== undefined}>
                    {t(version < liveVersion ? 'versions.rollBack' : 'versions.makeLive')}
                  </button>
                )}
                <button type="button" className="secondary" aria-describedby={`version-${version}-name`} onClick={() => void restore(version)} disabled={restoring !== undefined}>
                  {restoring === version ? t('versions.restoring') : t('versions.restore')}
                </button>
              </span>
            </div>
            {asking === version && (
              <Confirm
                question={t('versions.confirmLive', { version })}
                confirm={t('versions.confirm')}
                confirming={t('versions.confirming')}
                busy={rollingBack}
                tone="primary"
                onConfirm={() => void rollBack(version)}
                onCancel={() => cancel(version)}
                testId="confirm-live"
              />
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
