import { useId, useState, type FormEvent } from 'react'
import { EVENT_NAME_PATTERN } from '../../../../src/domain/nodes/wait-for-event.js'
import type { OutsideEvent } from '../api'
import { Field } from '../forms/fields'
import { useT } from '../i18n'

/** JSON text → an object, or why it is none. */
function objectOf(text: string): { ok: true; value: Record<string, unknown> } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: {} }
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ok: true, value: value as Record<string, unknown> } : { ok: false }
  } catch {
    return { ok: false }
  }
}

/**
 * Posts the outside event a preview waits for at a waitForEvent node, as the customer's system
 * would (`POST /v1/sessions/{id}/events`): its name, prefilled with the one the node waits for, and
 * its data. `onPost` answers why the service refused it, if it did.
 */
export function EventForm({ waitsFor, onPost }: { waitsFor: string; onPost(event: OutsideEvent): Promise<string | undefined> }) {
  const t = useT()
  const heading = useId()
  const [name, setName] = useState(waitsFor)
  const [data, setData] = useState('{}')
  const [busy, setBusy] = useState(false)
  const [refused, setRefused] = useState<string>()
  const parsed = objectOf(data)
  const nameOk = EVENT_NAME_PATTERN.test(name)
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (!nameOk || !parsed.ok) return
    setBusy(true)
    setRefused(await onPost({ name, data: parsed.value }))
    setBusy(false)
  }
  return (
    <form className="test-event" aria-labelledby={heading} onSubmit={(event) => void submit(event)} data-testid="test-event">
      <h3 id={heading}>{t('test.event.title')}</h3>
      <Field label={t('test.event.name')} error={nameOk ? undefined : t('test.event.badName')}>
        <input type="text" value={name} onChange={(e) => setName(e.target.value.trim())} aria-invalid={nameOk ? undefined : true} />
      </Field>
      <Field label={t('test.event.data')} error={parsed.ok ? undefined : t('test.event.badData')}>
        <textarea className="code" rows={2} spellCheck={false} value={data} onChange={(e) => setData(e.target.value)} aria-invalid={parsed.ok ? undefined : true} />
      </Field>
      <button type="submit" className="primary" disabled={busy || !nameOk || !parsed.ok} data-testid="test-event-post">
        {busy ? t('test.event.posting') : t('test.event.post')}
      </button>
      {refused && (
        <p className="field-error" role="alert">
          {t('test.event.refused', { message: refused })}
        </p>
      )}
    </form>
  )
}
