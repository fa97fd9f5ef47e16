import { useEffect, useId, useRef, useState, type FormEvent } from 'react'
import { LIMITS } from '../../../../src/domain/message-limits.js'
import { ChatTranscript, type ChatEntry as Line } from '../../shared/chat-transcript'
import { LengthCounter } from '../../shared/text-length'
import type { InboundMessage } from '../api'
import { useLang, useT, type Translate } from '../i18n'
import type { ChatEntry, Writing } from './conversation'

// The preview's conversation, where the person testing the flow is its contact: they answer the
// bot's buttons and list rows as the contact's app would, or type a reply.

export interface ChatProps {
  entries: ChatEntry[]
  /** Replies an AI step is writing, shown after the conversation until their turn brings them whole. */
  writing: Writing[]
  /** The person can answer: the session is active. */
  open: boolean
  /** Why the service refused a message the person sent, by the message's key: it was not sent. */
  refused: Readonly<Record<string, string>>
  onSend(message: InboundMessage): void
}

export function Chat({ entries, writing, open, refused, onSend }: ChatProps) {
  const t = useT()
  const log = useRef<HTMLDivElement>(null)
  const lines = entries.flatMap((entry) => linesOf(entry, refused, t))
  const written = writing.reduce((length, reply) => length + reply.text.length, 0)
  useEffect(() => {
    const element = log.current
    if (element) element.scrollTop = element.scrollHeight
  }, [lines.length, written])
  return (
    <div className="test-chat">
      {/* Focusable, so the conversation scrolls with the keyboard. */}
      <div ref={log} className="test-chat-log" role="region" aria-label={t('test.conversation')} tabIndex={0} data-testid="test-chat">
        <ChatTranscript aria-live="polite" t={t} asContact onAnswer={open ? onSend : undefined} entries={lines} />
        {/* A list of its own, busy while it grows: a screen reader says the reply once, whole, when its turn puts it in the conversation. */}
        {writing.length > 0 && (
          <ChatTranscript
            className="test-chat-writing"
            aria-label={t('test.writing')}
            aria-live="polite"
            aria-busy="true"
            t={t}
            asContact
            data-testid="test-writing"
            entries={writing.map((reply) => ({ kind: 'bot', key: `${reply.messageId}/${reply.nodeId}`, message: { type: 'text', text: { body: reply.text } } }))}
          />
        )}
      </div>
      <Composer open={open} onSend={onSend} />
    </div>
  )
}

/** An entry as the transcript draws it; a message the service refused is followed by why, and test-panel.css marks its bubble. */
function linesOf(entry: ChatEntry, refused: Readonly<Record<string, string>>, t: Translate): Line[] {
  const reason = refused[entry.key]
  if (entry.kind === 'person' && reason !== undefined) {
    return [
      { kind: 'contact', key: entry.key, message: entry.message },
      { kind: 'note', key: `${entry.key}-not-sent`, text: t('test.sendFailed', { message: reason }), tone: 'error', testId: 'test-not-sent' },
    ]
  }
  return [lineOf(entry, t)]
}

function lineOf(entry: ChatEntry, t: Translate): Line {
  switch (entry.kind) {
    case 'bot':
      return { kind: 'bot', key: entry.key, message: entry.message }
    case 'person':
      return { kind: 'contact', key: entry.key, message: entry.message }
    case 'transfer':
      return { kind: 'note', key: entry.key, text: t('test.transferred', { target: t(`test.target.${entry.targetType}`), id: entry.targetId }) }
    case 'failed':
      return { kind: 'note', key: entry.key, text: t('test.failed', { reason: entry.reason }), tone: 'error' }
    case 'event':
      return { kind: 'note', key: entry.key, text: t('test.eventPosted', { name: entry.name }), testId: 'test-event-posted' }
    case 'ended':
      return { kind: 'note', key: entry.key, text: t(`test.ended.${entry.status}`), tone: entry.status === 'completed' ? undefined : 'error', testId: 'test-ended' }
  }
}

/** The reply box, held to the service's limit on a text message (LIMITS.textBody), with how much of it is used. */
function Composer({ open, onSend }: { open: boolean; onSend(message: InboundMessage): void }) {
  const t = useT()
  const lang = useLang()
  const counter = useId()
  const [text, setText] = useState('')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!text.trim()) return
    onSend({ type: 'text', text: { body: text } })
    setText('')
  }
  return (
    <form className="test-composer" onSubmit={submit}>
      <input
        aria-label={t('test.reply')}
        aria-describedby={counter}
        placeholder={t('test.reply')}
        maxLength={LIMITS.textBody}
        value={text}
        onChange={(e) => setText(e.target.value)}
        disabled={!open}
        data-testid="test-reply"
      />
      <button type="submit" className="primary" disabled={!open || !text.trim()}>
        {t('test.send')}
      </button>
      <LengthCounter id={counter} text={text} max={LIMITS.textBody} lang={lang} />
    </form>
  )
}
