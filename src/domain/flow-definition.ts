import { Type, type Static } from '@sinclair/typebox'
import { Tags as CardTags } from './card.js'
import { AnyKey } from './schemas.js'

/**
 * The flow document shared unchanged by the editor and the engine: React-Flow-compatible nodes and
 * edges. This is its structure; what each node type's `data` holds, and the graph rules, are
 * checked by the flow validator (engine issue).
 */
export const FlowNode = Type.Object({
  id: Type.String({ minLength: 1 }),
  type: Type.String({ minLength: 1 }),
  position: Type.Object({ x: Type.Number(), y: Type.Number() }),
  data: Type.Record(AnyKey, Type.Unknown()),
})

export const FlowEdge = Type.Object({
  id: Type.String({ minLength: 1 }),
  source: Type.String({ minLength: 1 }),
  sourceHandle: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  target: Type.String({ minLength: 1 }),
})

export const FlowSettings = Type.Object({
  /** Inactivity timeout of this flow's sessions; default SESSION_TTL_SECONDS. */
  sessionTtlSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 24 * 3600 })),
})

export const FlowDefinition = Type.Object({
  schemaVersion: Type.Literal(1),
  settings: Type.Optional(FlowSettings),
  nodes: Type.Array(FlowNode),
  edges: Type.Array(FlowEdge),
})

export type FlowDefinition = Static<typeof FlowDefinition>

/** What a new flow holds when none is given: Start straight to End. */
export const startToEnd = (): FlowDefinition => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'end', type: 'end', position: { x: 240, y: 0 }, data: {} },
  ],
  edges: [{ id: 'start-end', source: 'start', target: 'end' }],
})

// ---------------------------------------------------------------------------------------------
// Node data, per node type. An outgoing message inside a node is written in exactly the shape of
// the webhook's `value.messages[]` (spec §6.3), so the engine only interpolates variables and
// copies it out. Text fields may hold `{{variable}}` placeholders.

const Tags = Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'tags carried by the outgoing message' }))
const BodyText = Type.Object({ text: Type.String({ minLength: 1 }) })
const FooterText = Type.Object({ text: Type.String({ minLength: 1 }) })

export const MediaKind = Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document'), Type.Literal('sticker')])

export const ButtonMessage = Type.Object({
  type: Type.Literal('button'),
  body: BodyText,
  footer: Type.Optional(FooterText),
  action: Type.Object({ buttons: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), title: Type.String({ minLength: 1 }) }), { minItems: 1 }) }),
})

export const ListMessage = Type.Object({
  type: Type.Literal('list'),
  body: BodyText,
  footer: Type.Optional(FooterText),
  action: Type.Object({
    button: Type.String({ minLength: 1, description: 'label of the button that opens the list' }),
    sections: Type.Array(
      Type.Object({
        title: Type.String(),
        rows: Type.Array(
          Type.Object({ id: Type.String({ minLength: 1 }), title: Type.String({ minLength: 1 }), description: Type.Optional(Type.String()) }),
          { minItems: 1 },
        ),
      }),
      { minItems: 1 },
    ),
  }),
})

export const CtaUrlMessage = Type.Object({
  type: Type.Literal('cta_url'),
  body: BodyText,
  action: Type.Object({
    name: Type.Literal('cta_url'),
    parameters: Type.Object({ display_text: Type.String({ minLength: 1 }), url: Type.String({ minLength: 1 }) }),
  }),
})

export const OutgoingMessage = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.Object({ body: Type.String({ minLength: 1 }) }), tags: Tags }),
  Type.Object({
    type: Type.Literal('media'),
    media: Type.Object({ type: MediaKind, mimeType: Type.String({ minLength: 1 }), url: Type.String({ minLength: 1 }), caption: Type.Optional(Type.String()) }),
    tags: Tags,
  }),
  Type.Object({
    type: Type.Literal('template'),
    template: Type.Object({ id: Type.String({ minLength: 1 }), params: Type.Array(Type.String()) }),
    tags: Tags,
  }),
  Type.Object({ type: Type.Literal('interactive'), interactive: Type.Union([ButtonMessage, ListMessage, CtaUrlMessage]), tags: Tags }),
])
export type OutgoingMessage = Static<typeof OutgoingMessage>

export const VariableName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })

export const InputKind = Type.Union([
  Type.Literal('text'),
  Type.Literal('number'),
  Type.Literal('email'),
  Type.Literal('phone'),
  Type.Literal('media'),
  Type.Literal('choice'),
])

export const ConditionOperator = Type.Union([
  Type.Literal('equals'),
  Type.Literal('not_equals'),
  Type.Literal('contains'),
  Type.Literal('starts_with'),
  Type.Literal('gt'),
  Type.Literal('gte'),
  Type.Literal('lt'),
  Type.Literal('lte'),
  Type.Literal('exists'),
  Type.Literal('regex'),
])

const JsonValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Record(AnyKey, Type.Unknown())])

/** The `data` of each node type. */
export const NodeData = {
  start: Type.Object({}),
  message: Type.Object({ messages: Type.Array(OutgoingMessage, { minItems: 1 }) }),
  question: Type.Object({
    /** Sent when the question is reached; for `choice`, its buttons or list rows are the choices. */
    prompt: OutgoingMessage,
    input: Type.Object({ kind: InputKind }),
    saveAs: Type.Optional(VariableName),
    /** Invalid replies re-prompt with `retryMessage` this many times, then follow `invalid`. */
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    retryMessage: Type.Optional(OutgoingMessage),
  }),
  condition: Type.Object({
    rules: Type.Array(
      Type.Object({
        id: Type.String({ minLength: 1 }),
        variable: VariableName,
        operator: ConditionOperator,
        value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
      }),
      { minItems: 1 },
    ),
  }),
  setVariable: Type.Object({ variable: VariableName, value: JsonValue }),
  transfer: Type.Object({ targetType: Type.Union([Type.Literal('sector'), Type.Literal('agent')]), targetId: Type.String({ format: 'uuid' }) }),
  kanbanMove: Type.Object({
    pipelineId: Type.String({ format: 'uuid' }),
    stageId: Type.String({ format: 'uuid' }),
    /** Key: a field id of the pipeline; a string may hold `{{…}}`. */
    values: Type.Optional(Type.Record(AnyKey, Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    /** Added to the card's tags: the card's own rules, so every tag a flow adds can be stored. */
    tags: Type.Optional(CardTags),
  }),
  end: Type.Object({}),
} as const

export type NodeType = keyof typeof NodeData
export const NODE_TYPES = Object.keys(NodeData) as NodeType[]

/** A node whose `data` is known to match its type's schema (after validation). */
export type TypedNode = { [T in NodeType]: { id: string; type: T; position: { x: number; y: number }; data: Static<(typeof NodeData)[T]> } }[NodeType]
