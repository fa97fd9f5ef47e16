import { ChatTranscript, type ChatEntry } from '../../../shared/chat-transcript'
import type { ShownNode } from '../../components/NodeName'
import { shortId } from '../../components/short-id'
import { useT, type Translate } from '../../i18n'
import type { Transcript, TranscriptEntry } from './api-types'

/** The session's conversation as a chat, and what the bot did in between as notes. */
export function TranscriptChat({ transcript, nodeName, sectorName }: { transcript: Transcript; nodeName(id: string): ShownNode; sectorName(id: string): string | undefined }) {
  const t = useT()
  const names = { nodeName, sectorName }
  return <ChatTranscript aria-label={t('sessions.chat.label')} t={t} entries={transcript.entries.map((entry, index) => chatEntry(entry, `${entry.eventId}-${index}`, t, names))} />
}

interface Names {
  nodeName(id: string): ShownNode
  sectorName(id: string): string | undefined
}

function chatEntry(entry: TranscriptEntry, key: string, t: Translate, { nodeName, sectorName }: Names): ChatEntry {
  const note = (text: string, tone?: 'warn' | 'error'): ChatEntry => ({ kind: 'note', key, text, tone, at: entry.at })
  switch (entry.kind) {
    case 'inbound':
      return { kind: 'contact', key, message: entry.message, at: entry.at }
    case 'outbound':
      return { kind: 'bot', key, message: entry.message, node: entry.nodeId ? nodeName(entry.nodeId) : undefined, at: entry.at }
    case 'started':
      return note(t('sessions.chat.started', { version: entry.flowVersion }))
    case 'kanban':
      return note(t(entry.kanban.action === 'create' ? 'sessions.chat.cardCreated' : 'sessions.chat.cardMoved', { card: shortId(entry.kanban.cardId) }))
    case 'function':
      return note(
        entry.function.type === 'finish'
          ? t('sessions.chat.finished')
          : t('sessions.chat.transferred', {
              target: t(`sessions.chat.target.${entry.function.targetType}`),
              id: (entry.function.targetType === 'sector' && sectorName(entry.function.targetId)) || shortId(entry.function.targetId),
            }),
      )
    case 'warning':
      return note(t('sessions.chat.warning', { warning: entry.warning }), 'warn')
    case 'expired':
      return note(t('sessions.chat.expired'))
    case 'failed':
      return note(t('sessions.chat.failed', { reason: t(`sessions.failure.${entry.reason}`) }), 'error')
  }
}
