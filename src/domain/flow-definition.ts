import { Type, type Static } from '@sinclair/typebox'
import { AnyKey } from './schemas.js'

/**
 * The flow document shared unchanged by the editor and the engine: React-Flow-compatible nodes and
 * edges. This is its structure; what each node type's `data` holds is its node type's schema
 * (src/domain/nodes), and the flow validator checks both and the graph rules.
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
  /** A publish runs the flow's conversation tests against the draft first and publishes only when all pass. */
  requirePassingTests: Type.Optional(Type.Boolean()),
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
// What nodes share: an outgoing message inside a node is written in exactly the shape of
// the webhook's `value.messages[]` (spec §6.3), so the engine only interpolates variables and
// copies it out. Text fields may hold `{{variable}}` placeholders.

const Tags = Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'tags carried by the outgoing message' }))
const BodyText = Type.Object({ text: Type.String({ minLength: 1 }) })
const FooterText = Type.Object({ text: Type.String({ minLength: 1 }) })

export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const
export const MediaKind = Type.Union(MEDIA_KINDS.map((kind) => Type.Literal(kind)))
export type MediaKind = Static<typeof MediaKind>

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

/** A variable's name, as nodes read and write it. */
export const VariableName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })
