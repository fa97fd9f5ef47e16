import { Type, type Static } from '@sinclair/typebox'
import { AI_CONNECTION_LIMITS, type ConnectionAsUsed } from '../ai-connection.js'
import { answerObject, completionRequest, parseCompletion, refusesJsonMode, type AnswerTool, type ChatMessage, type CompletionAsk } from '../chat-completions.js'
import { VariableName } from '../flow-definition.js'
import { CALL_LIMITS, type RecordedCall } from '../outside-call.js'
import { parseReply } from '../replies.js'
import type { VariableValue } from '../turn.js'
import type { VariableType } from '../variables.js'
import { checkHandleIds, checkTarget } from './checks.js'
import { ERROR_HANDLE, SUCCESS_HANDLE } from './http-request.js'
import type { CheckContext, Exit, NodeOf, Step, Visit } from './node-type.js'

/**
 * An AI step: one call to the chat completions endpoint of one of the workspace's AI connections.
 * `reply` sends the model's text as a message; `classify` leaves by the label the model picks for
 * the user's last message (or `other`); `extract` fills variables from the user's last message and
 * leaves by `success` when every required one was found and valid, by `missing` otherwise. Every
 * mode leaves by `error` when there is no usable answer. The call and its answer are recorded like
 * an `httpRequest`'s, so replay reads them and calls nothing (docs/ai.md).
 */

export const AI_MODES = ['reply', 'classify', 'extract'] as const
export type AiMode = (typeof AI_MODES)[number]

/** The types an extraction field takes, each checked as the `question` input kind of the same name is. */
export const EXTRACTED_TYPES = ['string', 'number', 'boolean', 'date', 'email', 'phone'] as const
export type ExtractedType = (typeof EXTRACTED_TYPES)[number]

/** The type of variable each extracted type saves. */
export const EXTRACTED_SAVES: Record<ExtractedType, VariableType> = { string: 'string', number: 'number', boolean: 'boolean', date: 'string', email: 'string', phone: 'string' }

export const OTHER_HANDLE = 'other'
export const MISSING_HANDLE = 'missing'

export const AI_STEP_LIMITS = {
  instructions: 4000,
  knowledge: 20_000,
  /** Texts of the conversation a reply sends the model. */
  history: { min: 0, max: 20, default: 10 },
  labels: { min: 2, max: 20 },
  labelId: 50,
  fields: { min: 1, max: 20 },
  description: 500,
  /** Models are slow: a call may take the longest an outside call may. */
  timeoutMs: { min: CALL_LIMITS.timeoutMs.min, max: CALL_LIMITS.timeoutMs.max, default: CALL_LIMITS.timeoutMs.max },
} as const

const Label = Type.Object({
  id: Type.String({ minLength: 1, maxLength: AI_STEP_LIMITS.labelId }),
  description: Type.String({ maxLength: AI_STEP_LIMITS.description }),
})

const Field = Type.Object({
  variable: VariableName,
  type: Type.Union(EXTRACTED_TYPES.map((type) => Type.Literal(type))),
  description: Type.String({ maxLength: AI_STEP_LIMITS.description }),
  required: Type.Boolean(),
})

export const schema = Type.Object({
  connectionId: Type.String({ minLength: 1 }),
  mode: Type.Union(AI_MODES.map((mode) => Type.Literal(mode))),
  /** The model to ask; the connection's when absent. */
  model: Type.Optional(Type.String({ minLength: 1, maxLength: AI_CONNECTION_LIMITS.modelLength })),
  /** What the model is told to do; `{{variables}}` are filled in. */
  instructions: Type.String({ maxLength: AI_STEP_LIMITS.instructions }),
  /** `reply`: a text the model answers from, such as a FAQ; `{{variables}}` are filled in. */
  knowledge: Type.Optional(Type.String({ maxLength: AI_STEP_LIMITS.knowledge })),
  /** `reply`: how many of the conversation's last texts the model sees. */
  history: Type.Optional(Type.Integer({ minimum: AI_STEP_LIMITS.history.min, maximum: AI_STEP_LIMITS.history.max })),
  /** `classify`: the labels, each an exit. */
  labels: Type.Optional(Type.Array(Label, { maxItems: AI_STEP_LIMITS.labels.max })),
  /** `extract`: the values to find, each saved in its variable. */
  fields: Type.Optional(Type.Array(Field, { maxItems: AI_STEP_LIMITS.fields.max })),
  /** `reply`: saves the text sent; `classify`: saves the label's id. */
  saveAs: Type.Optional(VariableName),
  timeoutMs: Type.Optional(Type.Integer({ minimum: AI_STEP_LIMITS.timeoutMs.min, maximum: AI_STEP_LIMITS.timeoutMs.max })),
})
export type Data = Static<typeof schema>
export type Label = Static<typeof Label>
export type Field = Static<typeof Field>

const errorExit: Exit = { id: ERROR_HANDLE, label: ERROR_HANDLE, kind: 'invalid' }

export const exits = (data: Partial<Data>): Exit[] => {
  switch (data.mode) {
    case 'classify':
      return [...(data.labels ?? []).map((label) => ({ id: label.id, label: label.id })), { id: OTHER_HANDLE, label: OTHER_HANDLE, kind: 'default' }, errorExit]
    case 'extract':
      return [{ id: SUCCESS_HANDLE, label: SUCCESS_HANDLE, kind: 'default' }, { id: MISSING_HANDLE, label: MISSING_HANDLE, kind: 'invalid' }, errorExit]
    default:
      return [{ id: SUCCESS_HANDLE, label: SUCCESS_HANDLE, kind: 'default' }, errorExit]
  }
}

export const writes = (data: Readonly<Record<string, unknown>>): string[] => {
  const fields = data.mode === 'extract' && Array.isArray(data.fields) ? data.fields.map((field: { variable?: unknown }) => field?.variable) : []
  return [...fields, data.mode === 'extract' ? undefined : data.saveAs].filter((name): name is string => typeof name === 'string')
}

/** Whether a visit reads the turn's calendar date: an extraction of a date counts from today. */
export const readsToday = (data: Data): boolean => data.mode === 'extract' && (data.fields ?? []).some((field) => field.type === 'date')

export const check = (data: Data, context: CheckContext): void => {
  const { report } = context
  if (!context.catalog.aiConnections?.has(data.connectionId)) report(['connectionId'], `no AI connection "${data.connectionId}" in this workspace`)
  const readOnlyIn = (key: 'knowledge' | 'history' | 'labels' | 'fields', mode: AiMode) => {
    if (data[key] !== undefined && data.mode !== mode) report([key], `${key} is read in ${mode} mode only`)
  }
  readOnlyIn('knowledge', 'reply')
  readOnlyIn('history', 'reply')
  readOnlyIn('labels', 'classify')
  readOnlyIn('fields', 'extract')
  switch (data.mode) {
    case 'reply':
      if (!data.instructions.trim()) report(['instructions'], 'a reply needs instructions: what the model answers, and how')
      if (data.saveAs !== undefined) checkTarget(data.saveAs, 'string', 'a reply is a string', ['saveAs'], context)
      break
    case 'classify': {
      const labels = data.labels ?? []
      if (labels.length < AI_STEP_LIMITS.labels.min) report(['labels'], `a classify step needs at least ${AI_STEP_LIMITS.labels.min} labels`)
      checkHandleIds(labels.map((label, i) => ({ id: label.id, at: ['labels', i, 'id'] })), context, { handle: OTHER_HANDLE, of: 'a message that fits no label' })
      labels.forEach((label, i) => {
        if (label.id === ERROR_HANDLE) report(['labels', i, 'id'], `"${ERROR_HANDLE}" is the handle of a failed call; choose another id`)
        if (!label.description.trim()) report(['labels', i, 'description'], 'describe the label: the model picks by the description')
      })
      if (data.saveAs !== undefined) checkTarget(data.saveAs, 'string', "a label's id is a string", ['saveAs'], context)
      break
    }
    case 'extract': {
      const fields = data.fields ?? []
      if (fields.length < AI_STEP_LIMITS.fields.min) report(['fields'], 'an extract step needs at least one field')
      const seen = new Set<string>()
      fields.forEach((field, i) => {
        if (seen.has(field.variable)) report(['fields', i, 'variable'], `"${field.variable}" is extracted twice`)
        seen.add(field.variable)
        checkTarget(field.variable, EXTRACTED_SAVES[field.type], `an extracted ${field.type} is a ${EXTRACTED_SAVES[field.type]}`, ['fields', i, 'variable'], context)
      })
      if (data.saveAs !== undefined) report(['saveAs'], 'an extract step saves into its fields\' variables')
      break
    }
  }
}

/** Leaves by `error`; with no edge there, the session ends in error for this reason. */
const failed = (visit: Visit, reason: string): Step => {
  visit.warn(`ai ${visit.nodeId}: ${reason}`)
  return { exit: ERROR_HANDLE, unhandled: `ai ${visit.nodeId} failed and has no error edge: ${reason}` }
}

const filled = (visit: Pick<Visit, 'interpolating'>, template: string): string => visit.interpolating((text) => text(template))

const bulleted = (lines: readonly string[]): string => lines.map((line) => `- ${line}`).join('\n')

/** The conversation the model is sent for the node's mode, from the node's data and the turn. */
export function promptOf(data: Data, visit: Pick<Visit, 'interpolating' | 'transcript' | 'scope' | 'today'>, said: string): ChatMessage[] {
  const instructions = filled(visit, data.instructions).trim()
  const system = (task: string) => ({ role: 'system' as const, content: [instructions, task].filter(Boolean).join('\n\n') })
  switch (data.mode) {
    case 'reply': {
      const knowledge = data.knowledge === undefined ? '' : filled(visit, data.knowledge).trim()
      const history = data.history ?? AI_STEP_LIMITS.history.default
      const lines = history === 0 ? [] : visit.transcript().slice(-history)
      return [system(knowledge ? `Answer from this knowledge only:\n${knowledge}` : ''), ...lines.map((line) => ({ role: line.role, content: line.text }))]
    }
    case 'classify': {
      const labels = (data.labels ?? []).map((label) => `${label.id}: ${label.description}`)
      const task = `Classify the user's message. Answer with a JSON object {"label": "<id>"}, the id one of these:\n${bulleted(labels)}\nAnswer {"label": "${OTHER_HANDLE}"} when none fits.`
      return [system(task), { role: 'user', content: said }]
    }
    case 'extract': {
      const fields = (data.fields ?? []).map((field) => `${field.variable} (${field.type}${field.required ? ', required' : ''}): ${field.description}`)
      const dated = readsToday(data) ? `\nWrite dates as YYYY-MM-DD; today is ${visit.today()}.` : ''
      const task = `Extract these values from the user's message. Answer with a JSON object with these keys, each null when the message does not give it:\n${bulleted(fields)}${dated}`
      return [system(task), { role: 'user', content: said }]
    }
  }
}

export const run = ({ data }: NodeOf<typeof schema>, visit: Visit): Step => {
  const connection = visit.aiConnection(data.connectionId)
  if (!connection) return failed(visit, `the AI connection ${data.connectionId} is not in this workspace any more`)
  const said = String(visit.scope().system.lastMessage ?? '').trim()
  if (data.mode !== 'reply' && !said) {
    visit.warn(`ai ${visit.nodeId}: no message from the user to read; a ${data.mode} step follows a question`)
    return { exit: data.mode === 'classify' ? OTHER_HANDLE : MISSING_HANDLE }
  }
  const model = data.model ?? connection.model
  const ask: CompletionAsk = {
    model,
    messages: promptOf(data, visit, said),
    maxTokens: connection.maxTokensPerCall,
    json: data.mode !== 'reply',
    stream: data.mode === 'reply',
    timeoutMs: data.timeoutMs ?? AI_STEP_LIMITS.timeoutMs.default,
  }
  const call = visit.callModel(data.connectionId, completionRequest(connection, ask))
  if (!call) return 'suspend'
  if (data.mode === 'reply' || !refusesJsonMode(call.answer)) return answered(data, connection, model, call, visit)
  // The endpoint has no JSON mode: the same question once more, the answer as a tool's arguments.
  noteCall(data, model, call, { promptTokens: 0, completionTokens: 0 }, visit)
  const again = visit.callModel(data.connectionId, completionRequest(connection, { ...ask, json: false, tool: answerTool(data) }))
  if (!again) return 'suspend'
  return answered(data, connection, model, again, visit)
}

/** The tool a structured step's answer is asked for by, where JSON mode is refused: its parameters are the answer's schema. */
export function answerTool(data: Data): AnswerTool {
  if (data.mode === 'classify') {
    const ids = [...(data.labels ?? []).map((label) => label.id), OTHER_HANDLE]
    return { name: 'classify', description: "The label of the user's message", parameters: { type: 'object', properties: { label: { type: 'string', enum: ids } }, required: ['label'] } }
  }
  const fields = data.fields ?? []
  const jsonType = (type: ExtractedType) => (type === 'number' || type === 'boolean' ? type : 'string')
  return {
    name: 'extract',
    description: "The values the user's message gives, each null when it does not give it",
    parameters: {
      type: 'object',
      properties: Object.fromEntries(fields.map((field) => [field.variable, { type: [jsonType(field.type), 'null'], description: field.description }])),
      required: fields.map((field) => field.variable),
    },
  }
}

const noteCall = (data: Data, model: string, call: RecordedCall, usage: { promptTokens: number; completionTokens: number }, visit: Visit): void => {
  if ('status' in call.answer) visit.noteModelCall({ connectionId: data.connectionId, model, ...usage, durationMs: call.durationMs })
}

/** Reads the recorded answer, records its tokens, and picks the exit. */
function answered(data: Data, connection: ConnectionAsUsed, model: string, call: RecordedCall, visit: Visit): Step {
  if ('error' in call.answer && call.answer.error === 'limit') return failed(visit, call.answer.message)
  const completion = parseCompletion(call.answer, connection, connection.maxTokensPerCall)
  noteCall(data, model, call, completion.usage, visit)
  if (!completion.ok) return failed(visit, completion.problem)
  switch (data.mode) {
    case 'reply':
      return replied(data, completion.text, visit)
    case 'classify':
      return classified(data, completion.text, visit)
    case 'extract':
      return extracted(data, completion.text, visit)
  }
}

function replied(data: Data, text: string, visit: Visit): Step {
  const reply = text.trim()
  if (!reply) return failed(visit, 'the model answered an empty text')
  visit.sendAsWritten([{ type: 'text', text: { body: reply } }])
  if (data.saveAs !== undefined) visit.assign(data.saveAs, reply)
  return { exit: SUCCESS_HANDLE }
}

function classified(data: Data, text: string, visit: Visit): Step {
  const answer = answerObject(text)
  if (!answer) return failed(visit, 'the model did not answer a JSON object')
  const picked = answer.label
  const label = (data.labels ?? []).find((candidate) => candidate.id === picked)
  if (!label && picked !== OTHER_HANDLE) visit.warn(`ai ${visit.nodeId}: the model answered the label ${JSON.stringify(picked)}, which is not one of the step's; leaving by ${OTHER_HANDLE}`)
  const handle = label?.id ?? OTHER_HANDLE
  if (data.saveAs !== undefined) visit.assign(data.saveAs, handle)
  return { exit: handle }
}

function extracted(data: Data, text: string, visit: Visit): Step {
  const answer = answerObject(text)
  if (!answer) return failed(visit, 'the model did not answer a JSON object')
  let complete = true
  for (const field of data.fields ?? []) {
    const given = Object.hasOwn(answer, field.variable) ? answer[field.variable] : undefined
    const value = given === undefined || given === null || given === '' ? undefined : checkedValue(field.type, given, visit)
    if (value === undefined) {
      if (given !== undefined && given !== null && given !== '') visit.warn(`ai ${visit.nodeId}: ${field.variable} ${JSON.stringify(given)} is not a valid ${field.type}`)
      if (field.required) complete = false
      continue
    }
    visit.assign(field.variable, value)
  }
  return { exit: complete ? SUCCESS_HANDLE : MISSING_HANDLE }
}

/** A value the model gave, checked as a reply to a question of the same kind; undefined when it is not valid. */
function checkedValue(type: ExtractedType, given: unknown, visit: Pick<Visit, 'today'>): VariableValue | undefined {
  if (type === 'boolean') {
    if (typeof given === 'boolean') return given
    const word = typeof given === 'string' ? given.trim().toLowerCase() : ''
    return word === 'true' ? true : word === 'false' ? false : undefined
  }
  if (typeof given !== 'string' && typeof given !== 'number') return undefined
  const kind = type === 'string' ? 'text' : type
  return parseReply(kind, { type: 'text', text: { body: String(given) } }, [], () => visit.today())?.value
}
