import { Type, type Static } from '@sinclair/typebox'
import { positionToString, type RecordedEvent } from '../eventstore/port.js'
import { Timestamp, Uuid } from '../domain/schemas.js'

const Optional = (description: string) => Type.Optional(Type.String({ description }))

/** What commands and the engine record beside each event; other keys may appear and are kept. */
export const EventMetadata = Type.Object(
  {
    actor: Optional('who caused it: an API key id, an OAuth client id, `engine`, `expiry-sweeper`, `system`'),
    correlationId: Optional('the id of the request (X-Request-Id) or CLI run that caused it'),
    causationId: Optional("for the engine's events: the messageId of the trigger the turn answered"),
    workspaceId: Optional('the workspace it belongs to'),
    organizationId: Optional('the organization it belongs to (engine events)'),
    kanbanAction: Type.Optional(Type.Integer({ minimum: 0, description: "on card events of a flow's kanbanMove: the place of the action in its turn's `kanban` list" })),
  },
  { additionalProperties: true },
)

/** An event as stored, JSON-safe: the envelope of DESIGN §2, shared by the events endpoint and `flowd audit export`. */
export const EventEnvelope = Type.Object({
  id: Uuid,
  type: Type.String(),
  stream: Type.String({ description: 'the stream it belongs to, e.g. session-{id}' }),
  revision: Type.Integer({ description: 'zero-based place in its stream' }),
  position: Type.String({ description: 'place in the global log, `commit/prepare`; compare the two numbers in turn' }),
  createdAt: Timestamp,
  data: Type.Unknown(),
  metadata: EventMetadata,
})
export type EventEnvelope = Static<typeof EventEnvelope>

export const toEnvelope = (recorded: RecordedEvent): EventEnvelope => ({
  id: recorded.id,
  type: recorded.type,
  stream: recorded.stream,
  revision: Number(recorded.revision),
  position: positionToString(recorded.position),
  createdAt: recorded.createdAt,
  data: recorded.data,
  metadata: recorded.metadata,
})
