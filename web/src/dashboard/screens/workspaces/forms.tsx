import { useState, type ReactNode } from 'react'
import { ErrorNotice, FormError, useFieldErrors } from '../../components/ui'
import { useT } from '../../i18n'

/** What a failed submit says about each of the form's `fields`, in the person's words. */
export function useFormFieldErrors(error: unknown, fields: readonly string[]): Record<string, string> {
  const all = useFieldErrors(error)
  return Object.fromEntries(fields.flatMap((field) => (all[field] === undefined ? [] : [[field, all[field]]])))
}

/** A failed submit's problems that no field of the form shows (those show on their field). */
export function SubmitError({ error, fields }: { error: unknown; fields: Record<string, string> }) {
  return <FormError error={error} shownOnFields={Object.keys(fields)} />
}

/** A form's submit: busy while it runs, and its failure kept for the form to show. */
export function useSubmit() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const run = async (action: () => Promise<void>) => {
    setBusy(true)
    setError(undefined)
    try {
      await action()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, reset: () => setError(undefined) }
}

/**
 * An action asked twice: the button, then the question with the action and a way back (inline, so
 * it needs no dialog and keeps keyboard focus where the person is). `subject` names what a button
 * whose label does not say it acts on; `plain` for an action that changes much but destroys nothing.
 */
export function ConfirmAction({
  label,
  subject,
  question,
  onConfirm,
  tone = 'danger',
}: {
  label: string
  subject?: string
  question: string
  onConfirm: () => Promise<void>
  tone?: 'danger' | 'plain'
}) {
  const t = useT()
  const [asking, setAsking] = useState(false)
  const submit = useSubmit()
  const danger = tone === 'danger'
  if (!asking) {
    return (
      <button type="button" className={danger ? 'secondary ws-danger' : 'secondary'} aria-label={subject === undefined ? undefined : `${label}: ${subject}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  }
  return (
    <div className={danger ? 'ws-confirm' : 'ws-confirm plain'} role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" className={danger ? 'ws-danger-solid' : undefined} autoFocus disabled={submit.busy} onClick={() => void submit.run(onConfirm)}>
        {label}
      </button>
      <button type="button" className="secondary" onClick={() => setAsking(false)}>
        {t('common.cancel')}
      </button>
      {submit.error !== undefined && <ErrorNotice error={submit.error} />}
    </div>
  )
}

/** Revoking a credential (a key, a client), asked twice: it cannot be undone. */
export function RevokeAction({ name, onRevoke }: { name: string; onRevoke: () => Promise<void> }) {
  const t = useT()
  return <ConfirmAction label={t('common.revoke')} subject={name} question={t('common.confirmRevoke', { name })} onConfirm={onRevoke} />
}

/** Deleting something, asked twice: `question` says what it breaks. */
export function DeleteAction({ name, question, onDelete }: { name: string; question: string; onDelete: () => Promise<void> }) {
  const t = useT()
  return <ConfirmAction label={t('workspaces.delete')} subject={name} question={question} onConfirm={onDelete} />
}

/**
 * A form in a card: its heading, the fields, the failure that names none of them, and its button,
 * busy while `onSubmit` runs: Create, or Save with a Cancel beside it for a change to something
 * that exists.
 */
export function CardForm({
  headingId,
  heading,
  level = 3,
  submit,
  errors,
  onSubmit,
  onCancel,
  children,
}: {
  headingId: string
  heading: string
  level?: 2 | 3
  submit: ReturnType<typeof useSubmit>
  errors: Record<string, string>
  onSubmit: () => Promise<void>
  onCancel?: () => void
  children: ReactNode
}) {
  const t = useT()
  const Heading = level === 2 ? 'h2' : 'h3'
  const [label, busyLabel] = onCancel ? [t('common.save'), t('common.saving')] : [t('common.create'), t('common.creating')]
  return (
    <form
      className="card ws-form"
      aria-labelledby={headingId}
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void submit.run(onSubmit)
      }}
    >
      <Heading id={headingId}>{heading}</Heading>
      {children}
      <SubmitError error={submit.error} fields={errors} />
      <div className="ws-actions">
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? busyLabel : label}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            {t('common.cancel')}
          </button>
        )}
      </div>
    </form>
  )
}
