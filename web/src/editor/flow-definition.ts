/** The flow document (docs/flow-definition.md), as the editor reads and writes it. */
import type { CardValue } from '../../../src/domain/card.js'
import { FIELD_VALUE_TYPES, type FieldType } from '../../../src/domain/field-types.js'
import type { OutgoingMessage } from '../../../src/domain/flow-definition.js'


export interface DefinitionNode {
  id: string
  type: string
  position: { x: number; y: number }
  data: Record<string, unknown>
}

export interface DefinitionEdge {
  id: string
  source: string
  sourceHandle?: string | null
  target: string
}

/** The flow's settings; the editor changes `requirePassingTests` (the Tests tab) and keeps the others as they are. */
export interface FlowSettings {
  sessionTtlSeconds?: number
  /** A publish runs the flow's conversation tests against the draft first, and publishes only if all pass. */
  requirePassingTests?: boolean
  [other: string]: unknown
}

export interface FlowDefinition {
  schemaVersion: 1
  settings?: FlowSettings
  nodes: DefinitionNode[]
  edges: DefinitionEdge[]
  /** Properties the format does not name are kept as they are. */
  [other: string]: unknown
}

export interface Problem {
  path: string
  message: string
}

// The node types, their data and their limits: the service's own modules (src/domain/nodes), of
// which the bundle keeps only what the editor reads (their exits, lists and limits), never their
// checks or how the engine runs them.
export type { NodeTypeName as NodeType } from '../../../src/domain/nodes/index.js'
export { DEFAULT_HANDLE, INVALID_HANDLE, type Exit } from '../../../src/domain/nodes/node-type.js'
export { INPUT_KINDS, RETRIES, type InputKind } from '../../../src/domain/nodes/question.js'
export { NUMERIC_OPERATORS, OPERATORS, type Operator, type Rule } from '../../../src/domain/nodes/condition.js'
export { TARGET_TYPES } from '../../../src/domain/nodes/transfer.js'
export type { Data as MessageData } from '../../../src/domain/nodes/message.js'
export type { Data as QuestionData } from '../../../src/domain/nodes/question.js'
export type { Data as ConditionData } from '../../../src/domain/nodes/condition.js'
export type { Data as SetVariableData } from '../../../src/domain/nodes/set-variable.js'
export type { Data as TransferData } from '../../../src/domain/nodes/transfer.js'
export type { Data as KanbanMoveData } from '../../../src/domain/nodes/kanban-move.js'

// Outgoing messages: exactly the webhook's `value.messages[]` shapes (spec §6.3).
export { MEDIA_KINDS, type MediaKind, type OutgoingMessage } from '../../../src/domain/flow-definition.js'
export type Interactive = Extract<OutgoingMessage, { type: 'interactive' }>['interactive']
export type Button = Extract<Interactive, { type: 'button' }>['action']['buttons'][number]
export type ListSection = Extract<Interactive, { type: 'list' }>['action']['sections'][number]
export type ListRow = ListSection['rows'][number]

/** The composer's choice of shape: the message type, or the interactive type. */
export type MessageKind = 'text' | 'media' | 'template' | 'button' | 'list' | 'cta_url'
export const MESSAGE_KINDS: MessageKind[] = ['text', 'media', 'template', 'button', 'list', 'cta_url']

export type { CardValue }

/** Filled by the engine in every session; readable, never written (docs/flow-definition.md). */
export const SYSTEM_VARIABLES = ['sessionId', 'externalId', 'flowId', 'workspaceId', 'lastMessage'] as const

/** WhatsApp's limits: the very constants the service's validator checks. */
export { LIMITS } from '../../../src/domain/message-limits.js'

/** A pipeline's field types and the JSON type each takes: the table the card and the validator check. */
export { FIELD_VALUE_TYPES, type FieldType }

// Plain decimal notation only: "1,5" or "1.000" could mean either of two numbers, so they stay text.
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/**
 * `value` as the field's JSON type takes it: a number for a number or currency field, true or
 * false for a boolean one, as it is for the others. Text that reads as such a value ("12",
 * "true") is converted; undefined when it does not (the card would refuse it).
 */
export function asFieldValue(type: FieldType, value: CardValue): CardValue | undefined {
  const wanted = FIELD_VALUE_TYPES[type] ?? 'string'
  if (typeof value === wanted) return value
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (wanted === 'number') return DECIMAL.test(text) && Number.isFinite(Number(text)) ? Number(text) : undefined
  if (wanted === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined
  return undefined
}
