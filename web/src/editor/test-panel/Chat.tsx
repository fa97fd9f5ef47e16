import { useEffect, useId, useRef, useState, type FormEvent } from 'react'
import { LIMITS } from '../../../../src/domain/message-limits.js'
import { ChatTranscript, type ChatEntry as Line } from '../../shared/chat-transcript'
import { LengthCounter } from '../../shared/text-length'
import type { InboundMessage } from '../api'
import { useLang, useT, type Translate } from '../i18n'
import type { ChatEntry } from './conversation'

// The preview's conversation, where the person testing the flow is its contact: they answer the
// bot's buttons and list rows as the contact's app would, or type a reply.

export interface ChatProps {
  entries: ChatEntry[]
  /** The person can answer: the session is active. */
  open: boolean
  /** Why the service refused a message the person sent, by the message's key: it was not sent. */
  refused: Readonly<Record<string, string>>
  onSend(message: InboundMessage): void
}

export function Chat({ entries, open, refused, onSend }: ChatProps) {
  const t = useT()
  const list = useRef<HTMLOListElement>(null)
  const lines = entries.flatMap((entry) => linesOf(entry, refused, t))
  useEffect(() => {
    const element = list.current
    if (element) element.scrollTop = element.scrollHeight
  }, [lines.length])
  return (
    <div className="test-chat">
      {/* Focusable, so the conversation scrolls with the keyboard. */}
      <ChatTranscript
        ref={list}
        className="test-chat-log"
        aria-label={t('test.conversation')}
        aria-live="polite"
        tabIndex={0}
        data-testid="test-chat"
        t={t}
        asContact
        onAnswer={open ? onSend : undefined}
        entries={lines}
      />
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
