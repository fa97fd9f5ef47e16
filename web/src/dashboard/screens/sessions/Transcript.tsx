import type { ReactNode } from 'react'
import { DateTime } from '../../components/ui'
import { useT } from '../../i18n'
import { InboundMessage, OutgoingMessage } from './Messages'
import { shortId } from '../../components/short-id'
import type { Transcript, TranscriptEntry } from './api-types'

/** The conversation as a chat: the contact's messages on the left, the bot's on the right, what the bot did in between. */
export function TranscriptChat({ transcript }: { transcript: Transcript }) {
  const t = useT()
  return (
    <ol className="chat" aria-label={t('sessions.chat.label')}>
      {transcript.entries.map((entry, index) => (
        <Entry key={`${entry.eventId}-${index}`} entry={entry} />
      ))}
    </ol>
  )
}

function Entry({ entry }: { entry: TranscriptEntry }) {
  const t = useT()
  switch (entry.kind) {
    case 'inbound':
      return (
        <Bubble side="inbound" who={t('sessions.chat.contact')} at={entry.at}>
          <InboundMessage message={entry.message} />
        </Bubble>
      )
    case 'outbound':
      return (
        <Bubble side="outbound" who={t('sessions.chat.bot', { node: entry.nodeId })} at={entry.at} tags={entry.message.tags}>
          <OutgoingMessage message={entry.message} />
        </Bubble>
      )
    case 'started':
      return <Note at={entry.at}>{t('sessions.chat.started', { version: entry.flowVersion })}</Note>
    case 'kanban':
      return <Note at={entry.at}>{t(entry.kanban.action === 'create' ? 'sessions.chat.cardCreated' : 'sessions.chat.cardMoved', { card: shortId(entry.kanban.cardId) })}</Note>
    case 'function':
      return (
        <Note at={entry.at}>
          {entry.function.type === 'finish'
            ? t('sessions.chat.finished')
            : t('sessions.chat.transferred', { target: t(`sessions.chat.target.${entry.function.targetType}`), id: shortId(entry.function.targetId) })}
        </Note>
      )
    case 'warning':
      return (
        <Note at={entry.at} tone="warn">
          {t('sessions.chat.warning', { warning: entry.warning })}
        </Note>
      )
    case 'expired':
      return <Note at={entry.at}>{t('sessions.chat.expired')}</Note>
    case 'failed':
      return (
        <Note at={entry.at} tone="error">
          {t('sessions.chat.failed', { reason: t(`sessions.failure.${entry.reason}`) })}
        </Note>
      )
  }
}

function Bubble({ side, who, at, tags, children }: { side: 'inbound' | 'outbound'; who: string; at: string; tags?: string[]; children: ReactNode }) {
  return (
    <li className={`chat-entry ${side}`}>
      <article className="chat-bubble" aria-label={who}>
        <header className="chat-who">
          <span>{who}</span>
          <DateTime value={at} />
        </header>
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

function Note({ at, tone, children }: { at: string; tone?: 'warn' | 'error'; children: ReactNode }) {
  return (
    <li className={`chat-entry note${tone ? ` ${tone}` : ''}`}>
      <p>
        {children} · <DateTime value={at} />
      </p>
    </li>
  )
}
