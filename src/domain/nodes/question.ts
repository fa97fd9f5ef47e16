import { Type, type Static } from '@sinclair/typebox'
import { OutgoingMessage, VariableName } from '../flow-definition.js'
import type { VariableType } from '../variables.js'
import { interpolator } from '../interpolate.js'
import { choicesOf, parseReply } from '../replies.js'
import { invalidReplyWarning, type InboundMessage } from '../turn.js'
import { article, checkHandleIds, checkTarget } from './checks.js'
import { DEFAULT_HANDLE, INVALID_HANDLE, type CheckContext, type Exit, type NodeOf, type Segment, type Step, type Visit } from './node-type.js'

export const INPUT_KINDS = ['text', 'number', 'email', 'phone', 'date', 'media', 'choice'] as const
export type InputKind = (typeof INPUT_KINDS)[number]
/** How many invalid replies re-prompt before the question leaves by `invalid`. */
export const RETRIES = { min: 0, max: 10, default: 2 } as const

/** Sends its prompt and waits for a reply of its input kind. */
export const schema = Type.Object({
  /** Sent when the question is reached; for `choice`, its buttons or list rows are the choices. */
  prompt: OutgoingMessage,
  input: Type.Object({ kind: Type.Union(INPUT_KINDS.map((kind) => Type.Literal(kind))) }),
  saveAs: Type.Optional(VariableName),
  /** Invalid replies re-prompt with `retryMessage` this many times, then follow `invalid`. */
  maxRetries: Type.Optional(Type.Integer({ minimum: RETRIES.min, maximum: RETRIES.max })),
  retryMessage: Type.Optional(OutgoingMessage),
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

export const exits = (data: Partial<Data>): Exit[] =>
  data.input?.kind === 'choice'
    ? [...choicesOf(data.prompt).map((choice) => ({ id: choice.id, label: choice.title || choice.id })), { id: INVALID_HANDLE, label: INVALID_HANDLE, kind: 'invalid' }]
    : [
        { id: DEFAULT_HANDLE, label: DEFAULT_HANDLE, kind: 'default' },
        { id: INVALID_HANDLE, label: INVALID_HANDLE, kind: 'invalid' },
      ]

export const messages = (data: Readonly<Record<string, unknown>>) => [
  { value: data.prompt, at: ['prompt'] },
  { value: data.retryMessage, at: ['retryMessage'] },
]

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
}

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.send([node.data.prompt])
  visit.wait(0)
  return 'wait'
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
    visit.wait(retries + 1)
    return 'wait'
  }
  visit.stopWaiting()
  return { exit: INVALID_HANDLE }
}
