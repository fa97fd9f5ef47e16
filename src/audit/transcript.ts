import { Type, type Static } from '@sinclair/typebox'
import { OutgoingMessage } from '../domain/flow-definition.js'
import { HttpCallAnswer, HttpCallRequest } from '../domain/outside-call.js'
import { Timestamp, Uuid } from '../domain/schemas.js'
import { TurnFailureReason, session, type SessionEvent } from '../domain/session.js'
import { InboundMessage, KanbanAction, OutsideEvent, TurnFunction, VariableValue, type TurnOutput } from '../domain/turn.js'

/**
 * A session's conversation as the user and the bot saw it, built from its event stream alone:
 * what came in, what went out and which node of which flow version sent it, what the bot did
 * (transfer, finish, kanban) and the warnings it raised, in the order they happened.
 */

const base = {
  at: Timestamp,
  /** The event the entry comes from. */
  eventId: Uuid,
}
const ofTurn = {
  ...base,
  /** The trigger the turn answered: the session's start or an inbound message. */
  messageId: Uuid,
  flowVersion: Type.Integer({ minimum: 1 }),
}

export const TranscriptEntry = Type.Union([
  Type.Object({
    kind: Type.Literal('started'),
    ...base,
    messageId: Uuid,
    flowId: Uuid,
    flowVersion: Type.Integer({ minimum: 1 }),
    variables: Type.Record(Type.String(), VariableValue),
  }),
  Type.Object({ kind: Type.Literal('inbound'), ...base, messageId: Uuid, message: InboundMessage }),
  Type.Object({ kind: Type.Literal('outbound'), ...ofTurn, nodeId: Type.String({ description: 'the node that sent it' }), message: OutgoingMessage }),
  Type.Object({ kind: Type.Literal('kanban'), ...ofTurn, nodeId: Type.String(), kanban: KanbanAction }),
  Type.Object({
    kind: Type.Literal('function'),
    ...ofTurn,
    nodeId: Type.Union([Type.String(), Type.Null()], { description: 'the node the turn ended at' }),
    function: TurnFunction,
  }),
  Type.Object({ kind: Type.Literal('warning'), ...ofTurn, warning: Type.String() }),
  Type.Object({
    kind: Type.Literal('call'),
    ...base,
    messageId: Uuid,
    nodeId: Type.String(),
    request: HttpCallRequest,
    answer: HttpCallAnswer,
    durationMs: Type.Integer({ minimum: 0 }),
  }, { description: 'a call outside the turn for messageId made (an httpRequest node), as sent with secrets redacted, and its answer' }),
  Type.Object({ kind: Type.Literal('event'), ...base, messageId: Uuid, event: OutsideEvent }, { description: 'an event an outside system posted into the session' }),
  Type.Object({ kind: Type.Literal('timer'), ...base, messageId: Uuid, nodeId: Type.String(), until: Timestamp }, { description: "the timer of the node waiting at nodeId fired: a question's reminder or reply timeout, a wait's timeout or a delay's end" }),
  Type.Object({ kind: Type.Literal('expired'), ...base }),
  Type.Object({
    kind: Type.Literal('failed'),
    ...base,
    messageId: Uuid,
    reason: TurnFailureReason,
  }, { description: 'the engine could not complete the turn for messageId: the session ended in error' }),
])
export type TranscriptEntry = Static<typeof TranscriptEntry>

export const Transcript = Type.Object({
  sessionId: Uuid,
  workspaceId: Uuid,
  flowId: Uuid,
  flowVersion: Type.Integer({ minimum: 1 }),
  externalId: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('completed'), Type.Literal('timeout'), Type.Literal('error')]),
  startedAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
  entries: Type.Array(TranscriptEntry),
})
export type Transcript = Static<typeof Transcript>

/** An event of the session's stream with the id it was stored under. */
export type StoredSessionEvent = SessionEvent & { id: string }

type Outbound = Extract<TranscriptEntry, { kind: 'outbound' }>
type Kanban = Extract<TranscriptEntry, { kind: 'kanban' }>

/**
 * A turn's messages and kanban actions in the order the turn made them: both lists are in order
 * already, and each entry names its node, so they are merged along the turn's visited nodes.
 */
function turnEntries(output: TurnOutput, common: Omit<Outbound, 'kind' | 'nodeId' | 'message'>): TranscriptEntry[] {
  const messages = [...output.messages]
  const kanban = [...output.kanban]
  const entries: TranscriptEntry[] = []
  const outbound = (): Outbound => {
    const { nodeId, ...message } = messages.shift()!
    return { kind: 'outbound', ...common, nodeId, message: message as OutgoingMessage }
  }
  const card = (): Kanban => {
    const action = kanban.shift()!
    return { kind: 'kanban', ...common, nodeId: action.nodeId, kanban: action }
  }
  for (const nodeId of output.visited) {
    while (messages[0]?.nodeId === nodeId) entries.push(outbound())
    while (kanban[0]?.nodeId === nodeId) entries.push(card())
  }
  while (messages.length) entries.push(outbound())
  while (kanban.length) entries.push(card())
  const endedAt = output.visited.at(-1) ?? null
  for (const fn of output.functions) entries.push({ kind: 'function', ...common, nodeId: endedAt, function: fn })
  for (const warning of output.warnings) entries.push({ kind: 'warning', ...common, warning })
  return entries
}

/** The transcript of a session from its events, oldest first; undefined when the stream holds no session. */
export function buildTranscript(events: readonly StoredSessionEvent[]): Transcript | undefined {
  const state = events.reduce((s, e) => session.evolve(s, e), session.initialState)
  if (state.status === 'none') return undefined
  const entries: TranscriptEntry[] = []
  for (const event of events) {
    switch (event.type) {
      case 'SessionStarted': {
        const { messageId, flowId, flowVersion, variables, startedAt } = event.data
        entries.push({ kind: 'started', at: startedAt, eventId: event.id, messageId, flowId, flowVersion, variables })
        break
      }
      case 'MessageReceived':
        entries.push({ kind: 'inbound', at: event.data.receivedAt, eventId: event.id, messageId: event.data.messageId, message: event.data.message })
        break
      case 'TurnCompleted': {
        const { messageId, output, completedAt } = event.data
        entries.push(...turnEntries(output, { at: completedAt, eventId: event.id, messageId, flowVersion: state.flowVersion }))
        break
      }
      case 'OutsideCallAnswered': {
        const { messageId, nodeId, request, answer, durationMs, answeredAt } = event.data
        entries.push({ kind: 'call', at: answeredAt, eventId: event.id, messageId, nodeId, request, answer, durationMs })
        break
      }
      case 'OutsideEventReceived':
        entries.push({ kind: 'event', at: event.data.receivedAt, eventId: event.id, messageId: event.data.messageId, event: event.data.event })
        break
      case 'TimerFired':
        entries.push({ kind: 'timer', at: event.data.firedAt, eventId: event.id, messageId: event.data.messageId, nodeId: event.data.nodeId, until: event.data.until })
        break
      case 'SessionExpired':
        entries.push({ kind: 'expired', at: event.data.expiredAt, eventId: event.id })
        break
      case 'TurnFailed':
        entries.push({ kind: 'failed', at: event.data.failedAt, eventId: event.id, messageId: event.data.messageId, reason: event.data.reason })
        break
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  }
  return {
    sessionId: state.sessionId,
    workspaceId: state.workspaceId,
    flowId: state.flowId,
    flowVersion: state.flowVersion,
    externalId: state.externalId,
    status: state.status,
    startedAt: state.startedAt,
    finishedAt: state.finishedAt,
    entries,
  }
}

// ---------------------------------------------------------------------------------------------
// Markdown: one line per entry, for reading, not for parsing (the JSON form is for that).

const quote = (text: string): string => text.replace(/\r?\n/g, ' ⏎ ')
// Text that came from users or flows must not turn into markup.
const escape = (text: string): string => quote(text).replace(/([\\`*_[\]<>#|])/g, '\\$1')

function inboundText(message: InboundMessage): string {
  switch (message.type) {
    case 'text':
      return escape(message.text.body)
    case 'interactive': {
      const reply = message.interactive.type === 'button_reply' ? message.interactive.button_reply : message.interactive.list_reply
      return `chose “${escape(reply.title)}” (\`${quote(reply.id)}\`)`
    }
    default:
      return `${message.type} ${escape(message.media.url)}${message.media.caption ? `: ${escape(message.media.caption)}` : ''}`
  }
}

function outboundText(message: OutgoingMessage): string {
  switch (message.type) {
    case 'text':
      return escape(message.text.body)
    case 'media':
      return `${message.media.type} ${escape(message.media.url)}${message.media.caption ? `: ${escape(message.media.caption)}` : ''}`
    case 'template':
      return `template \`${quote(message.template.id)}\` (${message.template.params.map(escape).join(', ')})`
    case 'interactive': {
      const { interactive } = message
      const body = escape(interactive.body.text)
      switch (interactive.type) {
        case 'button':
          return `${body} ${interactive.action.buttons.map((b) => `[${escape(b.title)}]`).join(' ')}`
        case 'list':
          return `${body} [${escape(interactive.action.button)}: ${interactive.action.sections.flatMap((s) => s.rows.map((r) => escape(r.title))).join(', ')}]`
        case 'cta_url':
          return `${body} [${escape(interactive.action.parameters.display_text)}](${interactive.action.parameters.url.replace(/[()\s]/g, encodeURIComponent)})`
      }
    }
  }
}

function entryLine(entry: TranscriptEntry): string {
  const at = `\`${entry.at}\``
  switch (entry.kind) {
    case 'started':
      return `- ${at} **Session started** on flow version ${entry.flowVersion}`
    case 'inbound':
      return `- ${at} **User**: ${inboundText(entry.message)}`
    case 'outbound':
      return `- ${at} **Bot** (v${entry.flowVersion}, node \`${quote(entry.nodeId)}\`): ${outboundText(entry.message)}`
    case 'kanban': {
      const { action, cardId, pipelineId, stageId } = entry.kanban
      return `- ${at} **Kanban** (v${entry.flowVersion}, node \`${quote(entry.nodeId)}\`): card ${cardId} ${action === 'create' ? 'created' : 'moved'} in pipeline ${pipelineId}, stage ${stageId}`
    }
    case 'function': {
      const node = entry.nodeId === null ? '' : `, node \`${quote(entry.nodeId)}\``
      const what = entry.function.type === 'transfer' ? `transfer to ${entry.function.targetType} ${entry.function.targetId}` : 'finish'
      return `- ${at} **Function** (v${entry.flowVersion}${node}): ${what}`
    }
    case 'warning':
      return `- ${at} _Warning_: ${escape(entry.warning)}`
    case 'call': {
      const answered = 'error' in entry.answer ? `no answer (${entry.answer.error}: ${escape(entry.answer.message)})` : `${entry.answer.status}`
      return `- ${at} **Call** (node \`${quote(entry.nodeId)}\`): ${entry.request.method} ${escape(entry.request.url)} → ${answered} in ${entry.durationMs} ms`
    }
    case 'event':
      return `- ${at} **Event** \`${quote(entry.event.name)}\`: ${escape(JSON.stringify(entry.event.data))}`
    case 'timer':
      return `- ${at} **Timer** of node \`${quote(entry.nodeId)}\` fired (set for ${entry.until})`
    case 'expired':
      return `- ${at} **Session expired** (inactivity timeout)`
    case 'failed':
      return `- ${at} **Session ended in error**: the turn could not be completed (${entry.reason})`
  }
}

/** The transcript as a readable Markdown document. */
export function transcriptMarkdown(transcript: Transcript): string {
  const header = [
    `# Session ${transcript.sessionId}`,
    '',
    `- Flow: ${transcript.flowId}, version ${transcript.flowVersion}`,
    `- Contact: ${transcript.externalId === null ? '(none)' : escape(transcript.externalId)}`,
    `- Status: ${transcript.status}`,
    `- Started: ${transcript.startedAt}${transcript.finishedAt ? `; finished: ${transcript.finishedAt}` : ''}`,
    '',
    '## Conversation',
    '',
  ]
  return [...header, ...transcript.entries.map(entryLine), ''].join('\n')
}
