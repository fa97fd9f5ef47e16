import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import type { InboundMessage } from '../api'
import { useT } from '../i18n'
import { ExternalLink, MessageText } from '../../shared/message-text'
import type { BotMessage, ChatEntry } from './conversation'

// The conversation as the contact's app shows it (after the dashboard's session transcript): the
// bot's messages on the left, the person's on the right; buttons and list rows are tappable and
// answer as the app would, with an interactive reply.

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
      <ol className="test-chat-log" ref={list} aria-label={t('test.conversation')} aria-live="polite" tabIndex={0} data-testid="test-chat">
        {entries.map((entry) => (
          <Entry key={entry.key} entry={entry} open={open} onSend={onSend} />
        ))}
      </ol>
      <Composer open={open} onSend={onSend} />
    </div>
  )
}

function Entry({ entry, open, onSend }: { entry: ChatEntry; open: boolean; onSend(message: InboundMessage): void }) {
  const t = useT()
  switch (entry.kind) {
    case 'bot':
      return (
        <li className="test-entry bot">
          <article className="test-bubble" aria-label={t('test.bot')}>
            <Bot message={entry.message} open={open} onSend={onSend} />
          </article>
        </li>
      )
    case 'person':
      return (
        <li className="test-entry person">
          <article className="test-bubble" aria-label={t('test.you')}>
            <Person message={entry.message} />
          </article>
        </li>
      )
    case 'transfer':
      return <Note>{t('test.transferred', { target: t(`test.target.${entry.targetType}`), id: entry.targetId })}</Note>
    case 'failed':
      return <Note tone="error">{t('test.failed', { reason: entry.reason })}</Note>
    case 'ended':
      return (
        <Note tone={entry.status === 'completed' ? undefined : 'error'} testId="test-ended">
          {t(`test.ended.${entry.status}`)}
        </Note>
      )
  }
}

function Note({ tone, testId, children }: { tone?: 'error'; testId?: string; children: ReactNode }) {
  return (
    <li className={`test-entry note${tone ? ` ${tone}` : ''}`} data-testid={testId}>
      <p>{children}</p>
    </li>
  )
}

function Bot({ message, open, onSend }: { message: BotMessage; open: boolean; onSend(message: InboundMessage): void }) {
  const t = useT()
  switch (message.type) {
    case 'text':
      return <MessageText className="test-text" text={message.text.body} />
    case 'media':
      return <MediaCard kind={message.media.type} mimeType={message.media.mimeType} url={message.media.url} caption={message.media.caption} />
    case 'template':
      return (
        <div>
          <p className="test-meta">{t('test.template', { id: message.template.id })}</p>
          {message.template.params.length > 0 && (
            <ol className="test-params">
              {message.template.params.map((param, index) => (
                <li key={index}>{param}</li>
              ))}
            </ol>
          )}
        </div>
      )
    case 'interactive': {
      const interactive = message.interactive
      return (
        <div>
          <MessageText className="test-text" text={interactive.body.text} />
          {'footer' in interactive && interactive.footer && <p className="test-meta">{interactive.footer.text}</p>}
          {interactive.type === 'button' && (
            <ul className="test-choices" aria-label={t('test.buttons')}>
              {interactive.action.buttons.map((button) => (
                <li key={button.id}>
                  <button
                    type="button"
                    className="test-choice"
                    disabled={!open}
                    onClick={() => onSend({ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: button.id, title: button.title } } })}
                  >
                    {button.title}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {interactive.type === 'list' &&
            interactive.action.sections.map((section, index) => (
              <div key={index} className="test-list-section">
                <p className="test-meta">{section.title || interactive.action.button}</p>
                <ul className="test-choices" aria-label={section.title || interactive.action.button}>
                  {section.rows.map((row) => (
                    <li key={row.id}>
                      <button
                        type="button"
                        className="test-choice row"
                        disabled={!open}
                        onClick={() => onSend({ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: row.id, title: row.title } } })}
                      >
                        <span>{row.title}</span>
                        {row.description && <small>{row.description}</small>}
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          {interactive.type === 'cta_url' && (
            <p className="test-cta">
              <ExternalLink href={interactive.action.parameters.url}>{interactive.action.parameters.display_text}</ExternalLink>
            </p>
          )}
        </div>
      )
    }
  }
}

function Person({ message }: { message: InboundMessage }) {
  const t = useT()
  if (message.type === 'text') return <MessageText className="test-text" text={message.text?.body ?? ''} />
  if (message.type === 'interactive' && message.interactive) {
    const chosen = message.interactive.type === 'button_reply' ? message.interactive.button_reply : message.interactive.list_reply
    return (
      <p className="test-text">
        <span className="test-meta">{t(message.interactive.type === 'button_reply' ? 'test.tapped' : 'test.picked')}</span> <strong>{chosen?.title}</strong>
      </p>
    )
  }
  if (message.type !== 'interactive' && message.media) return <MediaCard kind={message.type} mimeType={message.media.mimeType} url={message.media.url} caption={message.media.caption} />
  return null
}

type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker'

/** A file as a card: no file is fetched; its kind, name and caption are shown, with a link. */
function MediaCard({ kind, mimeType, url, caption }: { kind: MediaKind; mimeType: string; url: string; caption?: string }) {
  const t = useT()
  const fileName = decodeURIComponent(url.split(/[?#]/)[0]!.split('/').pop() || url)
  return (
    <figure className="test-media">
      <div className="test-media-kind" aria-hidden="true">
        {fileName.includes('.') ? fileName.split('.').pop()!.slice(0, 4) : t(`test.media.${kind}`).slice(0, 3)}
      </div>
      <figcaption>
        <span className="test-meta">
          {t(`test.media.${kind}`)} · {mimeType}
        </span>
        <span className="test-media-name">{fileName}</span>
        {caption && <MessageText className="test-text" text={caption} />}
        <ExternalLink href={url}>{t('test.media.open')}</ExternalLink>
      </figcaption>
    </figure>
  )
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
