import { useT } from '../i18n'

export interface SaveConflictProps {
  busy: boolean
  /** Discards this editor's changes and loads the draft as saved now. */
  onReloadTheirs(): void
  /** Saves this editor's draft over the one saved meanwhile. */
  onOverwrite(): void
}

/** Shown when a save finds that someone else saved the draft meanwhile: the person chooses whose draft stays. */
export function SaveConflict({ busy, onReloadTheirs, onOverwrite }: SaveConflictProps) {
  const t = useT()
  return (
    <div className="save-conflict" role="alertdialog" aria-labelledby="save-conflict-title" aria-describedby="save-conflict-text" data-testid="save-conflict">
      <div>
        <strong id="save-conflict-title">{t('conflict.title')}</strong>
        <p id="save-conflict-text">{t('conflict.text')}</p>
      </div>
      <div className="save-conflict-actions">
        <button type="button" className="secondary" onClick={onReloadTheirs} disabled={busy} data-testid="conflict-reload">
          {t('conflict.reload')}
        </button>
        <button type="button" className="danger" onClick={onOverwrite} disabled={busy} data-testid="conflict-overwrite">
          {t('conflict.overwrite')}
        </button>
      </div>
    </div>
  )
}
