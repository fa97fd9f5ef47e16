import type { Clipboard } from '../flow/useClipboard'
import { useT } from '../i18n'

/** The clipboard's buttons, each naming its shortcut (the keys work outside form fields). */
export function CanvasActions({ clipboard }: { clipboard: Clipboard }) {
  const t = useT()
  const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+'
  return (
    <div className="canvas-actions" role="toolbar" aria-label={t('edit.title')}>
      <button type="button" className="secondary" onClick={clipboard.duplicate} disabled={!clipboard.canCopy} title={`${mod}D`} data-testid="duplicate">
        {t('edit.duplicate')}
      </button>
      <button type="button" className="secondary" onClick={clipboard.copy} disabled={!clipboard.canCopy} title={`${mod}C`}>
        {t('edit.copy')}
      </button>
      <button type="button" className="secondary" onClick={clipboard.paste} disabled={!clipboard.canPaste} title={`${mod}V`}>
        {t('edit.paste')}
      </button>
      <button type="button" className="secondary" onClick={clipboard.selectAll} title={`${mod}A`}>
        {t('edit.selectAll')}
      </button>
    </div>
  )
}
