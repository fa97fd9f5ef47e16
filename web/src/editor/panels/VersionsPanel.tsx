import { useEffect, useState } from 'react'
import { errorText } from '../../shared/api-problems'
import type { FlowApi, PublishedVersion } from '../api'
import type { FlowDefinition } from '../flow-definition'
import { useT } from '../i18n'

export interface VersionsPanelProps {
  api: FlowApi
  flowId: string
  /** The newest published version: the list is read again when it changes. */
  publishedVersion: number
  /** Loads a version's definition into the draft (the person saves it then). */
  onRestore(version: number, definition: FlowDefinition): void
}

/** The flow's published versions, newest first, each with its date and a way back to it. */
export function VersionsPanel({ api, flowId, publishedVersion, onRestore }: VersionsPanelProps) {
  const t = useT()
  const [versions, setVersions] = useState<PublishedVersion[]>()
  const [failure, setFailure] = useState<unknown>()
  const [restoring, setRestoring] = useState<number>()

  useEffect(() => {
    let current = true
    api.versions(flowId).then(
      (found) => current && setVersions(found),
      (error: unknown) => current && setFailure(error),
    )
    return () => {
      current = false
    }
  }, [api, flowId, publishedVersion])

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

  const date = new Intl.DateTimeFormat(t('versions.dateLocale'), { dateStyle: 'medium', timeStyle: 'short' })
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
      <ul className="version-list">
        {versions?.map(({ version, publishedAt }) => (
          <li key={version} data-testid={`version-${version}`}>
            <span>
              <strong>{t('versions.version', { version })}</strong>
              {version === publishedVersion && <span className="badge">{t('versions.current')}</span>}
              <br />
              <time className="muted" dateTime={publishedAt}>
                {date.format(new Date(publishedAt))}
              </time>
            </span>
            <button type="button" className="secondary" onClick={() => void restore(version)} disabled={restoring !== undefined}>
              {restoring === version ? t('versions.restoring') : t('versions.restore')}
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
