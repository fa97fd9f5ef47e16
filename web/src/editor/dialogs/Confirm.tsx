import { useT } from '../i18n'

export interface ConfirmProps {
  /** What is asked, shown and given as the group's name. */
  question: string
  /** The confirming button's words, and its words while the action runs. */
  confirm: string
  confirming: string
  busy: boolean
  /** Danger for what cannot be undone (a deletion). */
  tone: 'danger' | 'primary'
  onConfirm(): void
  onCancel(): void
  testId: string
}

/** A second click asked for in place, beside what it is about; the confirming button takes the focus. */
export function Confirm({ question, confirm, confirming, busy, tone, onConfirm, onCancel, testId }: ConfirmProps) {
  const t = useT()
  return (
    <div className={`confirm ${tone}`} role="group" aria-label={question} data-testid={testId}>
      <span>{question}</span>
      <span className="confirm-actions">
        <button type="button" className={tone === 'danger' ? 'danger-solid' : 'primary'} autoFocus disabled={busy} onClick={onConfirm}>
          {busy ? confirming : confirm}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onCancel}>
          {t('confirm.cancel')}
        </button>
      </span>
    </div>
  )
}
