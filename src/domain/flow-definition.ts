import { Type, type Static } from '@sinclair/typebox'

/**
 * The flow document shared unchanged by the editor and the engine: React-Flow-compatible nodes and
 * edges. This is its structure; what each node type's `data` holds, and the graph rules, are
 * checked by the flow validator (engine issue).
 */
export const FlowNode = Type.Object({
  id: Type.String({ minLength: 1 }),
  type: Type.String({ minLength: 1 }),
  position: Type.Object({ x: Type.Number(), y: Type.Number() }),
  data: Type.Record(Type.String(), Type.Unknown()),
})

export const FlowEdge = Type.Object({
  id: Type.String({ minLength: 1 }),
  source: Type.String({ minLength: 1 }),
  sourceHandle: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  target: Type.String({ minLength: 1 }),
})

export const FlowDefinition = Type.Object({
  schemaVersion: Type.Literal(1),
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
