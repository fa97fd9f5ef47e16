import { useT } from '../../i18n'
import type { Inbound, MediaKind, Outgoing } from './api-types'
import { ExternalLink, MessageText } from '../../../shared/message-text'

type Media = { kind: MediaKind; mimeType: string; url: string; caption?: string }

/** A message the bot sent, drawn as the contact's app shows it; its buttons are shown, not pressed. */
export function OutgoingMessage({ message }: { message: Outgoing }) {
  const t = useT()
  switch (message.type) {
    case 'text':
      return <MessageText text={message.text.body} />
    case 'media':
      return <MediaCard media={{ kind: message.media.type, mimeType: message.media.mimeType, url: message.media.url, caption: message.media.caption }} />
    case 'template':
      return (
        <div className="chat-template">
          <p className="chat-meta-line">{t('sessions.chat.template', { id: message.template.id })}</p>
          {message.template.params.length > 0 && (
            <ol className="chat-params" aria-label={t('sessions.chat.templateParams')}>
              {message.template.params.map((param, index) => (
                <li key={index}>{param}</li>
              ))}
            </ol>
          )}
        </div>
      )
    case 'interactive':
      return <Interactive message={message.interactive} />
  }
}

type InteractiveMessage = Extract<Outgoing, { type: 'interactive' }>['interactive']

function Interactive({ message }: { message: InteractiveMessage }) {
  const t = useT()
  return (
    <div className="chat-interactive">
      <MessageText text={message.body.text} />
      {'footer' in message && message.footer && <p className="chat-footer">{message.footer.text}</p>}
      {message.type === 'button' && (
        <ul className="chat-buttons" aria-label={t('sessions.chat.buttons')}>
          {message.action.buttons.map((button) => (
            <li key={button.id}>
              <button type="button" className="chat-button" disabled title={t('sessions.chat.buttonId', { id: button.id })}>
                {button.title}
              </button>
            </li>
          ))}
        </ul>
      )}
      {message.type === 'list' && (
        <div className="chat-list">
          <button type="button" className="chat-button" disabled>
            {message.action.button}
          </button>
          {message.action.sections.map((section, index) => (
            <div key={index} className="chat-list-section">
              {section.title && <p className="chat-list-title">{section.title}</p>}
              <ul aria-label={section.title || t('sessions.chat.listRows')}>
                {section.rows.map((row) => (
                  <li key={row.id} className="chat-list-row">
                    <span className="chat-row-title">{row.title}</span>
                    {row.description && <span className="chat-row-description">{row.description}</span>}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      )}
      {message.type === 'cta_url' && (
        <p className="chat-cta">
          <ExternalLink href={message.action.parameters.url}>{message.action.parameters.display_text}</ExternalLink>
        </p>
      )}
    </div>
  )
}

/** A message the contact sent: text, a file, or the button or list row they chose. */
export function InboundMessage({ message }: { message: Inbound }) {
  const t = useT()
  switch (message.type) {
    case 'text':
      return <MessageText text={message.text.body} />
    case 'interactive': {
      const chosen = message.interactive.type === 'button_reply' ? message.interactive.button_reply : message.interactive.list_reply
      return (
        <p className="chat-reply">
          <span className="chat-meta-line">{t(message.interactive.type === 'button_reply' ? 'sessions.chat.pressed' : 'sessions.chat.picked')}</span>{' '}
          <strong>{chosen.title}</strong>
        </p>
      )
    }
    default:
      return <MediaCard media={{ kind: message.type, mimeType: message.media.mimeType, url: message.media.url, caption: message.media.caption }} />
  }
}

/** A file in the conversation, as a card: no file is fetched, only its kind, name and caption shown, with a link. */
function MediaCard({ media }: { media: Media }) {
  const t = useT()
  const fileName = decodeURIComponent(media.url.split(/[?#]/)[0]!.split('/').pop() || media.url)
  return (
    <figure className="chat-media">
      <div className="chat-media-kind" aria-hidden="true">
        {fileName.includes('.') ? fileName.split('.').pop()!.slice(0, 4) : t(`sessions.media.${media.kind}`).slice(0, 3)}
      </div>
      <figcaption>
        <span className="chat-media-label">
          {t(`sessions.media.${media.kind}`)} · <span className="mono">{media.mimeType}</span>
        </span>
        <span className="chat-media-name">{fileName}</span>
        {media.caption && <MessageText text={media.caption} />}
        <ExternalLink href={media.url}>{t('sessions.media.open')}</ExternalLink>
      </figcaption>
    </figure>
  )
}
