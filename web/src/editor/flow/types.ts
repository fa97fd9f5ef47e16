/** The flow document (docs/flow-definition.md), as the editor reads and writes it. */

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

export interface FlowDefinition {
  schemaVersion: 1
  settings?: { sessionTtlSeconds?: number }
  nodes: DefinitionNode[]
  edges: DefinitionEdge[]
  /** Properties the format does not name are kept as they are. */
  [other: string]: unknown
}

export interface Problem {
  path: string
  message: string
}

export const NODE_TYPES = ['start', 'message', 'question', 'condition', 'setVariable', 'transfer', 'kanbanMove', 'end'] as const
export type NodeType = (typeof NODE_TYPES)[number]
export const isNodeType = (type: string): type is NodeType => (NODE_TYPES as readonly string[]).includes(type)

// Outgoing messages: exactly the webhook's `value.messages[]` shapes (spec §6.3).

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker'
export const MEDIA_KINDS: MediaKind[] = ['image', 'video', 'audio', 'document', 'sticker']

export interface Button {
  id: string
  title: string
}
export interface ListRow {
  id: string
  title: string
  description?: string
}
export interface ListSection {
  title: string
  rows: ListRow[]
}

export type Interactive =
  | { type: 'button'; body: { text: string }; footer?: { text: string }; action: { buttons: Button[] } }
  | { type: 'list'; body: { text: string }; footer?: { text: string }; action: { button: string; sections: ListSection[] } }
  | { type: 'cta_url'; body: { text: string }; action: { name: 'cta_url'; parameters: { display_text: string; url: string } } }

export type OutgoingMessage = (
  | { type: 'text'; text: { body: string } }
  | { type: 'media'; media: { type: MediaKind; mimeType: string; url: string; caption?: string } }
  | { type: 'template'; template: { id: string; params: string[] } }
  | { type: 'interactive'; interactive: Interactive }
) & { tags?: string[] }

/** The composer's choice of shape: the message type, or the interactive type. */
export type MessageKind = 'text' | 'media' | 'template' | 'button' | 'list' | 'cta_url'
export const MESSAGE_KINDS: MessageKind[] = ['text', 'media', 'template', 'button', 'list', 'cta_url']

export type InputKind = 'text' | 'number' | 'email' | 'phone' | 'media' | 'choice'
export const INPUT_KINDS: InputKind[] = ['text', 'number', 'email', 'phone', 'media', 'choice']

export type Operator = 'equals' | 'not_equals' | 'contains' | 'starts_with' | 'gt' | 'gte' | 'lt' | 'lte' | 'exists' | 'regex'
export const OPERATORS: Operator[] = ['equals', 'not_equals', 'contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'exists', 'regex']
export const NUMERIC_OPERATORS: Operator[] = ['gt', 'gte', 'lt', 'lte']

export interface QuestionData {
  prompt: OutgoingMessage
  input: { kind: InputKind }
  saveAs?: string
  maxRetries?: number
  retryMessage?: OutgoingMessage
  [other: string]: unknown
}

export interface Rule {
  id: string
  variable: string
  operator: Operator
  value?: string | number | boolean
}

export interface ConditionData {
  rules: Rule[]
  [other: string]: unknown
}

export interface MessageData {
  messages: OutgoingMessage[]
  [other: string]: unknown
}

export interface SetVariableData {
  variable: string
  value: string | number | boolean | Record<string, unknown>
  [other: string]: unknown
}

export interface TransferData {
  targetType: 'sector' | 'agent'
  targetId: string
  [other: string]: unknown
}

export type CardValue = string | number | boolean

export interface KanbanMoveData {
  pipelineId: string
  stageId: string
  values?: Record<string, CardValue>
  tags?: string[]
  [other: string]: unknown
}

/** Filled by the engine in every session; readable, never written (docs/flow-definition.md). */
export const SYSTEM_VARIABLES = ['sessionId', 'externalId', 'flowId', 'workspaceId', 'lastMessage'] as const

/** The handle of a question whose retries are used up; of a valid non-choice answer or no matching rule. */
export const INVALID_HANDLE = 'invalid'
export const DEFAULT_HANDLE = 'default'

/** WhatsApp's limits: the very constants the service's validator checks. */
export { LIMITS } from '../../../../src/domain/message-limits.js'

/** A pipeline's field types and the JSON type each takes: the table the card and the validator check. */
export { FIELD_VALUE_TYPES, type FieldType } from '../../../../src/domain/field-types.js'
