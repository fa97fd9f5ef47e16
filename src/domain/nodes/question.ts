import { Type, type Static } from '@sinclair/typebox'
import { OutgoingMessage, VariableName } from '../flow-definition.js'
import type { VariableType } from '../variables.js'
import { interpolator } from '../interpolate.js'
import { choicesOf, parseReply } from '../replies.js'
import { invalidReplyWarning, type InboundMessage } from '../turn.js'
import { article, checkHandleIds, checkTarget } from './checks.js'
import { DEFAULT_HANDLE, INVALID_HANDLE, type CheckContext, type Exit, type NodeOf, type Segment, type Step, type Visit, type WaitTimer, type Wake } from './node-type.js'

export const INPUT_KINDS = ['text', 'number', 'email', 'phone', 'date', 'media', 'choice'] as const
export type InputKind = (typeof INPUT_KINDS)[number]
/** How many invalid replies re-prompt before the question leaves by `invalid`. */
export const RETRIES = { min: 0, max: 10, default: 2 } as const
/** How long a question waits for a reply when it has a `timeout`, and the reminders it may send meanwhile. */
export const REPLY_TIMEOUT = { minSeconds: 5, maxSeconds: 7 * 24 * 3600, maxReminders: 3 } as const
/** The handle a question with a `timeout` leaves by when no reply came in time. */
export const TIMEOUT_HANDLE = 'timeout'

const ReplyTimeout = Type.Object({
  /** Counted from the prompt (or the last retry message) to leaving by `timeout`. */
  seconds: Type.Integer({ minimum: REPLY_TIMEOUT.minSeconds, maximum: REPLY_TIMEOUT.maxSeconds }),
  /** Sent while the question waits, each `afterSeconds` after the prompt; ascending, each before `seconds`. */
  reminders: Type.Optional(
    Type.Array(Type.Object({ afterSeconds: Type.Integer({ minimum: 1 }), message: OutgoingMessage }), { maxItems: REPLY_TIMEOUT.maxReminders }),
  ),
})

/** Sends its prompt and waits for a reply of its input kind. */
export const schema = Type.Object({
  /** Sent when the question is reached; for `choice`, its buttons or list rows are the choices. */
  prompt: OutgoingMessage,
  input: Type.Object({ kind: Type.Union(INPUT_KINDS.map((kind) => Type.Literal(kind))) }),
  saveAs: Type.Optional(VariableName),
  /** Invalid replies re-prompt with `retryMessage` this many times, then follow `invalid`. */
  maxRetries: Type.Optional(Type.Integer({ minimum: RETRIES.min, maximum: RETRIES.max })),
  retryMessage: Type.Optional(OutgoingMessage),
  /** Without a reply in time the question leaves by `timeout` (the session finishes where it has no edge). */
  timeout: Type.Optional(ReplyTimeout),
})
export type Data = Static<typeof schema>

/** The type of variable each input kind saves. */
export const SAVED_TYPE: Record<InputKind, VariableType> = {
  text: 'string',
  number: 'number',
  email: 'string',
  phone: 'string',
  date: 'string',
  media: 'object',
  choice: 'string',
}

export const exits = (data: Partial<Data>): Exit[] => {
  const answered: Exit[] =
    data.input?.kind === 'choice' ? choicesOf(data.prompt).map((choice) => ({ id: choice.id, label: choice.title || choice.id })) : [{ id: DEFAULT_HANDLE, label: DEFAULT_HANDLE, kind: 'default' }]
  const timedOut: Exit[] = data.timeout ? [{ id: TIMEOUT_HANDLE, label: TIMEOUT_HANDLE, kind: 'timeout' }] : []
  return [...answered, { id: INVALID_HANDLE, label: INVALID_HANDLE, kind: 'invalid' }, ...timedOut]
}

export const messages = (data: Readonly<Record<string, unknown>>) => {
  const timeout = data.timeout as { reminders?: unknown } | undefined
  const reminders = Array.isArray(timeout?.reminders) ? (timeout.reminders as { message?: unknown }[]) : []
  return [
    { value: data.prompt, at: ['prompt'] },
    { value: data.retryMessage, at: ['retryMessage'] },
    ...reminders.map((reminder, i) => ({ value: reminder?.message, at: ['timeout', 'reminders', i, 'message'] })),
  ]
}

export const writes = (data: Readonly<Record<string, unknown>>) => (typeof data.saveAs === 'string' ? data.saveAs : undefined)

/** Where each choice id of a prompt sits: its buttons, or the rows of every list section. */
function choiceIdsAt(prompt: OutgoingMessage): { id: string; at: Segment[] }[] | undefined {
  if (prompt.type !== 'interactive') return undefined
  const { interactive } = prompt
  if (interactive.type === 'button') return interactive.action.buttons.map((b, i) => ({ id: b.id, at: ['interactive', 'action', 'buttons', i, 'id'] }))
  if (interactive.type === 'list') {
    return interactive.action.sections.flatMap((section, s) => section.rows.map((row, r) => ({ id: row.id, at: ['interactive', 'action', 'sections', s, 'rows', r, 'id'] })))
  }
  return undefined
}

export const check = (data: Data, context: CheckContext): void => {
  if (data.input.kind === 'choice') {
    const choices = choiceIdsAt(data.prompt)
    if (!choices) context.report(['prompt'], "a choice question's prompt must be an interactive button or list message")
    else checkHandleIds(choices.map((c) => ({ id: c.id, at: ['prompt', ...c.at] })), context, { handle: INVALID_HANDLE, of: 'invalid replies' })
  }
  const saved = SAVED_TYPE[data.input.kind]
  if (data.saveAs !== undefined) checkTarget(data.saveAs, saved, `this question saves ${article(saved)}`, ['saveAs'], context)
  if (data.timeout) checkReminders(data.timeout, context)
}

/** Reminders come in the order they are sent, each before the question times out. */
function checkReminders({ seconds, reminders = [] }: ReplyTimeout, context: CheckContext): void {
  reminders.forEach((reminder, i) => {
    const at = ['timeout', 'reminders', i, 'afterSeconds']
    if (reminder.afterSeconds >= seconds) context.report(at, `a reminder is sent before the question times out (after ${seconds} s)`)
    else if (i > 0 && reminder.afterSeconds <= reminders[i - 1]!.afterSeconds) context.report(at, 'reminders are listed in the order they are sent, each later than the one before')
  })
}
type ReplyTimeout = Static<typeof ReplyTimeout>

/** The timer of a question waiting from now: its first reminder's, else its timeout's; none without a timeout. */
const firstTimer = (data: Data, visit: Visit): WaitTimer | undefined => {
  if (!data.timeout) return undefined
  const first = data.timeout.reminders?.[0]
  return { until: visit.now() + (first?.afterSeconds ?? data.timeout.seconds) * 1000, reminded: 0 }
}

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.send([node.data.prompt])
  visit.wait(0, firstTimer(node.data, visit))
  return 'wait'
}

/**
 * The question's timer fired: it sends the next reminder and waits for the one after (or the
 * timeout), timed from the prompt; past the last reminder it leaves by `timeout`.
 */
export const wake = ({ data }: NodeOf<typeof schema>, visit: Visit, wake: Wake): Step => {
  const reminders = data.timeout?.reminders ?? []
  if (wake.type === 'timer' && data.timeout && wake.reminded < reminders.length) {
    const reminder = reminders[wake.reminded]!
    visit.send([reminder.message])
    const askedAt = Date.parse(wake.until) - reminder.afterSeconds * 1000
    const nextAfter = reminders[wake.reminded + 1]?.afterSeconds ?? data.timeout.seconds
    visit.wait(wake.retries, { until: askedAt + nextAfter * 1000, reminded: wake.reminded + 1 })
    return 'wait'
  }
  visit.stopWaiting()
  return { exit: TIMEOUT_HANDLE, finishReason: 'timeout' }
}

export const resume = ({ id, data }: NodeOf<typeof schema>, visit: Visit, retries: number, message: InboundMessage): Exclude<Step, 'complete'> => {
  const silent = interpolator(visit.scope()).text
  const choices = data.input.kind === 'choice' ? choicesOf(data.prompt).map(({ id, title }) => ({ id, title: silent(title) })) : []
  const accepted = parseReply(data.input.kind, message, choices, () => visit.today())
  if (accepted) {
    if (data.saveAs) visit.assign(data.saveAs, accepted.value)
    visit.stopWaiting()
    return { exit: accepted.handle }
  }
  visit.warn(invalidReplyWarning(id))
  if (retries < (data.maxRetries ?? RETRIES.default)) {
    visit.send([data.retryMessage ?? data.prompt])
    visit.wait(retries + 1, firstTimer(data, visit))
    return 'wait'
  }
  visit.stopWaiting()
  return { exit: INVALID_HANDLE }
}
