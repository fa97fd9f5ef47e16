import type { ComponentPropsWithRef, ReactNode } from 'react'
import type { components, paths } from '../../../client/src/schema'
import type { ChatTranscriptKey } from './chat-transcript-strings'
import { DateTime } from './date-time'
import type { Translate } from './i18n'
import { ExternalLink, MessageText } from './message-text'
import './chat-transcript.css'

// A conversation as one component draws it wherever it is shown (a session's page in the
// dashboard, the editor's test panel): the contact on the left, the bot on the right, what happened
// in between centred; the bot's messages as the contact's app shows them.

type WebhookBody = components['schemas']['WebhookBody']
/** A message the bot sends, as a webhook and a transcript carry it. */
export type BotMessage = Extract<WebhookBody['changes'][number], { field: 'messages' }>['value']['messages'][number]
/** A message the contact sends, as the API takes it. */
export type ContactMessage = paths['/v1/sessions/{sessionId}/message']['post']['requestBody']['content']['application/json']
type MediaKind = Extract<BotMessage, { type: 'media' }>['media']['type']

/** One line of a conversation; `at`, when known, is shown with it. */
export type ChatEntry =
  | { kind: 'bot'; key: string; message: BotMessage; node?: { id: string; name: string }; at?: string }
  | { kind: 'contact'; key: string; message: ContactMessage; at?: string }
  | { kind: 'note'; key: string; text: string; tone?: 'warn' | 'error'; at?: string; testId?: string }
  /** A note that opens to more, such as a call outside with what it sent and got back: `summary` is its line. */
  | { kind: 'detail'; key: string; summary: ReactNode; children: ReactNode; tone?: 'warn' | 'error'; at?: string; testId?: string }

type Words = Translate<ChatTranscriptKey>

interface ChatTranscriptProps extends Omit<ComponentPropsWithRef<'ol'>, 'children'> {
  entries: ChatEntry[]
  t: Words
  /** The reader is the contact, testing a flow: their side of the conversation is "you". */
  asContact?: boolean
  /** Sends the contact's answer when the bot's buttons or list rows are pressed; without it they are shown, not pressable. */
  onAnswer?(reply: ContactMessage): void
}

export function ChatTranscript({ entries, t, asContact = false, onAnswer, className, ...list }: ChatTranscriptProps) {
  return (
    <ol className={className ? `chat ${className}` : 'chat'} {...list}>
      {entries.map((entry) => (
        <Entry key={entry.key} entry={entry} t={t} asContact={asContact} onAnswer={onAnswer} />
      ))}
    </ol>
  )
}

function Entry({ entry, t, asContact, onAnswer }: { entry: ChatEntry; t: Words; asContact: boolean; onAnswer?(reply: ContactMessage): void }) {
  switch (entry.kind) {
    case 'bot':
      return (
        <Bubble side="bot" who={entry.node ? t('chat.botAt', { node: entry.node.name }) : t('chat.bot')} whoTitle={entry.node?.id} at={entry.at} tags={entry.message.tags}>
          <BotMessageView message={entry.message} t={t} onAnswer={onAnswer} />
        </Bubble>
      )
    case 'contact':
      return (
        <Bubble side="contact" who={asContact ? t('chat.you') : t('chat.contact')} at={entry.at}>
          <ContactMessageView message={entry.message} t={t} asContact={asContact} />
        </Bubble>
      )
    case 'note':
      return (
        <li className={`chat-entry note${entry.tone ? ` ${entry.tone}` : ''}`} data-testid={entry.testId}>
          <p>
            {entry.text}
            {entry.at && (
              <>
                {' · '}
                <DateTime value={entry.at} />
              </>
            )}
          </p>
        </li>
      )
    case 'detail':
      return (
        <li className={`chat-entry note detail${entry.tone ? ` ${entry.tone}` : ''}`} data-testid={entry.testId}>
          <details>
            <summary>
              {entry.summary}
              {entry.at && (
                <>
                  {' · '}
                  <DateTime value={entry.at} />
                </>
              )}
            </summary>
            <div className="chat-detail">{entry.children}</div>
          </details>
        </li>
      )
  }
}

function Bubble({ side, who, whoTitle, at, tags, children }: { side: 'contact' | 'bot'; who: string; whoTitle?: string; at?: string; tags?: string[]; children: ReactNode }) {
  return (
    <li className={`chat-entry ${side}`}>
      <article className="chat-bubble" aria-label={who}>
        {at && (
          <header className="chat-who">
            <span title={whoTitle}>{who}</span>
            <DateTime value={at} />
          </header>
        )}
        {children}
        {tags && tags.length > 0 && (
          <ul className="chat-tags">
            {tags.map((tag) => (
              <li key={tag} className="badge">
                {tag}
              </li>
            ))}
          </ul>
        )}
      </article>
    </li>
  )
}

function BotMessageView({ message, t, onAnswer }: { message: BotMessage; t: Words; onAnswer?(reply: ContactMessage): void }) {
  switch (message.type) {
    case 'text':
      return <MessageText text={message.text.body} />
    case 'media':
      return <MediaCard kind={message.media.type} mimeType={message.media.mimeType} url={message.media.url} caption={message.media.caption} t={t} />
    case 'template':
      return (
        <div className="chat-template">
          <p className="chat-meta-line">{t('chat.template', { id: message.template.id })}</p>
          {message.template.params.length > 0 && (
            <ol className="chat-params" aria-label={t('chat.templateParams')}>
              {message.template.params.map((param, index) => (
                <li key={index}>{param}</li>
              ))}
            </ol>
          )}
        </div>
      )
    case 'interactive':
      return <Interactive message={message.interactive} t={t} onAnswer={onAnswer} />
  }
}

type InteractiveMessage = Extract<BotMessage, { type: 'interactive' }>['interactive']

/** The bot's question with its choices: each answers as the contact's app would, with an interactive reply. */
function Interactive({ message, t, onAnswer }: { message: InteractiveMessage; t: Words; onAnswer?(reply: ContactMessage): void }) {
  const choice = (id: string, reply: ContactMessage, content: ReactNode) => (
    <li key={id}>
      <button type="button" className="chat-button" disabled={!onAnswer} title={t('chat.buttonId', { id })} onClick={() => onAnswer?.(reply)}>
        {content}
      </button>
    </li>
  )
  return (
    <div className="chat-interactive">
      <MessageText text={message.body.text} />
      {'footer' in message && message.footer && <p className="chat-meta-line">{message.footer.text}</p>}
      {message.type === 'button' && (
        <ul className="chat-choices" aria-label={t('chat.buttons')}>
          {message.action.buttons.map(({ id, title }) => choice(id, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id, title } } }, title))}
        </ul>
      )}
      {message.type === 'list' &&
        message.action.sections.map((section, index) => (
          <div key={index} className="chat-list-section">
            <p className="chat-list-title">{section.title || message.action.button}</p>
            <ul className="chat-choices" aria-label={section.title || message.action.button}>
              {section.rows.map(({ id, title, description }) =>
                choice(
                  id,
                  { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id, title } } },
                  <>
                    <span className="chat-row-title">{title}</span>
                    {description && <span className="chat-row-description">{description}</span>}
                  </>,
                ),
              )}
            </ul>
          </div>
        ))}
      {message.type === 'cta_url' && (
        <p className="chat-cta">
          <ExternalLink href={message.action.parameters.url}>{message.action.parameters.display_text}</ExternalLink>
        </p>
      )}
    </div>
  )
}

/** What the contact sent: text, a file, or the button or list row they chose. */
function ContactMessageView({ message, t, asContact }: { message: ContactMessage; t: Words; asContact: boolean }) {
  if (message.type === 'text') return <MessageText text={message.text?.body ?? ''} />
  if (message.type === 'interactive') {
    const pressed = message.interactive?.type === 'button_reply'
    const chosen = pressed ? message.interactive?.button_reply : message.interactive?.list_reply
    const verb = asContact ? (pressed ? 'chat.youPressed' : 'chat.youPicked') : pressed ? 'chat.pressed' : 'chat.picked'
    return (
      <p className="chat-reply">
        <span className="chat-meta-line">{t(verb)}</span> <strong>{chosen?.title}</strong>
      </p>
    )
  }
  return message.media ? <MediaCard kind={message.type} mimeType={message.media.mimeType} url={message.media.url} caption={message.media.caption} t={t} /> : null
}

/** A file in the conversation, as a card: no file is fetched, only its kind, name and caption shown, with a link. */
function MediaCard({ kind, mimeType, url, caption, t }: { kind: MediaKind; mimeType: string; url: string; caption?: string; t: Words }) {
  const fileName = decodeURIComponent(url.split(/[?#]/)[0]!.split('/').pop() || url)
  return (
    <figure className="chat-media">
      <div className="chat-media-kind" aria-hidden="true">
        {fileName.includes('.') ? fileName.split('.').pop()!.slice(0, 4) : t(`chat.media.${kind}`).slice(0, 3)}
      </div>
      <figcaption>
        <span className="chat-media-label">
          {t(`chat.media.${kind}`)} · <span className="mono">{mimeType}</span>
        </span>
        <span className="chat-media-name">{fileName}</span>
        {caption && <MessageText text={caption} />}
        <ExternalLink href={url}>{t('chat.media.open')}</ExternalLink>
      </figcaption>
    </figure>
  )
}
