import { useEffect, useRef, useState, type FormEvent } from 'react'
import { ChatTranscript, type ChatEntry as Line } from '../../shared/chat-transcript'
import type { InboundMessage } from '../api'
import { useT, type Translate } from '../i18n'
import type { ChatEntry } from './conversation'

// The preview's conversation, where the person testing the flow is its contact: they answer the
// bot's buttons and list rows as the contact's app would, or type a reply.

export interface ChatProps {
  entries: ChatEntry[]
  /** The person can answer: the session is active. */
  open: boolean
  onSend(message: InboundMessage): void
}

export function Chat({ entries, open, onSend }: ChatProps) {
  const t = useT()
  const list = useRef<HTMLOListElement>(null)
  useEffect(() => {
    const element = list.current
    if (element) element.scrollTop = element.scrollHeight
  }, [entries.length])
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
        entries={entries.map((entry) => lineOf(entry, t))}
      />
      <Composer open={open} onSend={onSend} />
    </div>
  )
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
    case 'ended':
      return { kind: 'note', key: entry.key, text: t(`test.ended.${entry.status}`), tone: entry.status === 'completed' ? undefined : 'error', testId: 'test-ended' }
  }
}

function Composer({ open, onSend }: { open: boolean; onSend(message: InboundMessage): void }) {
  const t = useT()
  const [text, setText] = useState('')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!text.trim()) return
    onSend({ type: 'text', text: { body: text } })
    setText('')
  }
  return (
    <form className="test-composer" onSubmit={submit}>
      <input aria-label={t('test.reply')} placeholder={t('test.reply')} value={text} onChange={(e) => setText(e.target.value)} disabled={!open} data-testid="test-reply" />
      <button type="submit" className="primary" disabled={!open || !text.trim()}>
        {t('test.send')}
      </button>
    </form>
  )
}
