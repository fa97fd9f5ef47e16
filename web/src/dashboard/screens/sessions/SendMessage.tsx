import { useState, type FormEvent } from 'react'
import { LIMITS } from '../../../../../src/domain/message-limits.js'
import { LengthCounter } from '../../../shared/text-length'
import { api, unwrap, type paths } from '../../api'
import { Field, FormError, SelectField, useFieldErrors } from '../../components/ui'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'

type MessageBody = paths['/v1/sessions/{sessionId}/message']['post']['requestBody']['content']['application/json']

const KINDS = ['text', 'button_reply', 'list_reply', 'image', 'video', 'audio', 'document', 'sticker'] as const
type Kind = (typeof KINDS)[number]

interface Draft {
  kind: Kind
  text: string
  choiceId: string
  choiceTitle: string
  url: string
  mimeType: string
  caption: string
}

const EMPTY: Draft = { kind: 'text', text: '', choiceId: '', choiceTitle: '', url: '', mimeType: '', caption: '' }

/** The API's body for what the form holds: the spec's inbound message of that kind. */
function bodyOf(draft: Draft): MessageBody {
  switch (draft.kind) {
    case 'text':
      return { type: 'text', text: { body: draft.text } }
    case 'button_reply':
      return { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: draft.choiceId, title: draft.choiceTitle } } }
    case 'list_reply':
      return { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: draft.choiceId, title: draft.choiceTitle } } }
    default:
      return { type: draft.kind, media: { url: draft.url, mimeType: draft.mimeType, ...(draft.caption ? { caption: draft.caption } : {}) } }
  }
}

/** Sends a message into the active session as if the contact wrote it; the bot's answer then shows in the conversation. */
export function SendMessage({ sessionId, onSent }: { sessionId: string; onSent(): void }) {
  const t = useT()
  const [draft, setDraft] = useState(EMPTY)
  const [error, setError] = useState<unknown>()
  const [sending, setSending] = useState(false)
  const [sent, setSent] = useState(false)
  const set = (name: keyof Draft) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value })
  const change = (name: keyof Draft) => (value: string) => setDraft({ ...draft, [name]: value })
  const fields = useFieldErrors(error)
  const { lang } = usePreferences()

  async function submit(event: FormEvent) {
    event.preventDefault()
    setSending(true)
    setSent(false)
    try {
      await unwrap(api.POST('/v1/sessions/{sessionId}/message', { params: { path: { sessionId } }, body: bodyOf(draft) }))
      setError(undefined)
      setDraft({ ...EMPTY, kind: draft.kind })
      setSent(true)
      onSent()
    } catch (failure) {
      setError(failure)
    } finally {
      setSending(false)
    }
  }

  const choice = draft.kind === 'button_reply' || draft.kind === 'list_reply'
  const shownOnFields = ['text', 'text.body', 'media.url', 'media.mimeType', 'media.caption', `interactive.${draft.kind}.id`, `interactive.${draft.kind}.title`]
  return (
    <form className="card send-message" onSubmit={submit} aria-label={t('sessions.send.title')}>
      <div className="form-row">
        <SelectField label={t('sessions.send.kind')} value={draft.kind} onChange={change('kind')} options={KINDS.map((kind) => ({ value: kind, label: t(`sessions.send.kind.${kind}`) }))} />
        {draft.kind === 'text' && (
          <Field label={t('sessions.send.text')} hint={<LengthCounter text={draft.text} max={LIMITS.textBody} lang={lang} />} error={fields['text.body'] ?? fields.text}>
            {(props) => <textarea {...props} rows={2} required maxLength={LIMITS.textBody} value={draft.text} onChange={set('text')} />}
          </Field>
        )}
        {choice && (
          <>
            <Field label={t('sessions.send.choiceId')} error={fields[`interactive.${draft.kind}.id`]}>
              {(props) => <input {...props} required value={draft.choiceId} onChange={set('choiceId')} />}
            </Field>
            <Field label={t('sessions.send.choiceTitle')} error={fields[`interactive.${draft.kind}.title`]}>
              {(props) => <input {...props} required value={draft.choiceTitle} onChange={set('choiceTitle')} />}
            </Field>
          </>
        )}
        {!choice && draft.kind !== 'text' && (
          <>
            <Field label={t('sessions.send.url')} error={fields['media.url']}>
              {(props) => <input {...props} type="url" required value={draft.url} onChange={set('url')} />}
            </Field>
            <Field label={t('sessions.send.mimeType')} error={fields['media.mimeType']}>
              {(props) => <input {...props} required placeholder="image/jpeg" value={draft.mimeType} onChange={set('mimeType')} />}
            </Field>
            <Field label={t('sessions.send.caption')} error={fields['media.caption']}>
              {(props) => <input {...props} value={draft.caption} onChange={set('caption')} />}
            </Field>
          </>
        )}
        <div className="send-actions">
          <button type="submit" disabled={sending}>
            {sending ? t('sessions.send.sending') : t('sessions.send.submit')}
          </button>
        </div>
      </div>
      <FormError error={error} shownOnFields={shownOnFields} />
      <p role="status" className="send-status">
        {sent ? t('sessions.send.sent') : ''}
      </p>
    </form>
  )
}
