import { ChatTranscript, type ChatEntry } from '../../../shared/chat-transcript'
import { clockTime } from '../../../shared/date-time'
import { JsonBlock } from '../../components/JsonBlock'
import type { ShownNode } from '../../components/NodeName'
import { shortId } from '../../components/short-id'
import { useT, type Translate } from '../../i18n'
import type { Transcript, TranscriptEntry } from './api-types'
import { CallDetails, CallLine } from './OutsideCall'

/** The session's conversation as a chat, and what the bot did in between as notes: a call outside opens to what it sent and got back. */
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
  const note = (text: string, tone?: 'warn' | 'error', testId?: string): ChatEntry => ({ kind: 'note', key, text, tone, at: entry.at, testId })
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
    case 'call':
      return { kind: 'detail', key, at: entry.at, testId: 'chat-call', summary: <CallLine call={entry} node={nodeName(entry.nodeId)} />, children: <CallDetails call={entry} /> }
    case 'event':
      return {
        kind: 'detail',
        key,
        at: entry.at,
        testId: 'chat-event',
        summary: (
          <span className="event-line">
            {t('sessions.event.title')} <code>{entry.event.name}</code> <span className="event-preview">{preview(entry.event.data, t)}</span>
          </span>
        ),
        children: <JsonBlock value={entry.event.data} />,
      }
    case 'timer':
      return note(t('sessions.chat.timer', { node: nodeName(entry.nodeId).name, due: clockTime(entry.until) }), undefined, 'chat-timer')
  }
}

/** An event's data on one line, cut short: the whole is a click away. */
const PREVIEW_CHARACTERS = 60
function preview(data: Record<string, unknown>, t: Translate): string {
  if (Object.keys(data).length === 0) return t('sessions.event.noData')
  const line = JSON.stringify(data)
  return line.length > PREVIEW_CHARACTERS ? `${line.slice(0, PREVIEW_CHARACTERS - 1)}…` : line
}
