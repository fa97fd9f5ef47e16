import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { HEADER_NAME, RESERVED_HEADERS } from './nodes/http-request.js'
import { CALL_LIMITS } from './outside-call.js'
import { Timestamp, Uuid } from './schemas.js'
import { SECRET_NAME_PATTERN } from './secret-rules.js'

/**
 * AI connections: where a workspace's AI steps send their prompts, an endpoint that speaks the
 * OpenAI-compatible chat completions protocol, with the model the customer chose and pays for. All
 * connections of a workspace live in one stream, so a name is unique exactly and the limit on their
 * number holds under concurrent writes. The key is never here: `apiKeySecret` names a workspace
 * secret, read only when a call is made.
 */
export const aiConnectionsStream = (workspaceId: string) => `ai-connections-${workspaceId}`

export const AI_CONNECTION_LIMITS = {
  perWorkspace: 20,
  nameLength: 100,
  modelLength: 200,
  baseUrlLength: 2048,
  headers: 10,
  headerValueLength: 1024,
  /** Tokens an answer may take (the protocol's `max_tokens`). */
  maxTokensPerCall: { min: 1, max: 32_768, default: 1024 },
  /** Model calls one session may make through the connection; every call counts toward a session's calls as well. */
  callsPerSession: { min: 1, max: CALL_LIMITS.perSession, default: 50 },
} as const

/** A header value without line breaks. */
export const HEADER_VALUE_PATTERN = /^[\t\x20-\x7e\u0080-\uffff]*$/
/** Headers a connection cannot add: the transport's, and the protocol's own, which the service writes. */
export const RESERVED_CONNECTION_HEADERS: readonly string[] = [...RESERVED_HEADERS, 'authorization', 'content-type', 'accept']

/** A header the connection adds to every call. */
export const ConnectionHeader = Type.Object({
  name: Type.String({ pattern: HEADER_NAME.source }),
  value: Type.String({ maxLength: AI_CONNECTION_LIMITS.headerValueLength, pattern: HEADER_VALUE_PATTERN.source }),
})
export type ConnectionHeader = Static<typeof ConnectionHeader>

/** What a connection is, apart from its identity and dates. */
const settingsSchema = {
  name: Type.String({ minLength: 1, maxLength: AI_CONNECTION_LIMITS.nameLength }),
  /** https, without user, query or fragment, and without a trailing slash: `{baseUrl}/chat/completions` is called. */
  baseUrl: Type.String({ minLength: 1, maxLength: AI_CONNECTION_LIMITS.baseUrlLength }),
  apiKeySecret: Type.String({ pattern: SECRET_NAME_PATTERN.source }),
  model: Type.String({ minLength: 1, maxLength: AI_CONNECTION_LIMITS.modelLength }),
  headers: Type.Array(ConnectionHeader, { maxItems: AI_CONNECTION_LIMITS.headers }),
  maxTokensPerCall: Type.Integer({ minimum: AI_CONNECTION_LIMITS.maxTokensPerCall.min, maximum: AI_CONNECTION_LIMITS.maxTokensPerCall.max }),
  callsPerSession: Type.Integer({ minimum: AI_CONNECTION_LIMITS.callsPerSession.min, maximum: AI_CONNECTION_LIMITS.callsPerSession.max }),
}
const Settings = Type.Object(settingsSchema)
export type AiConnectionSettings = Static<typeof Settings>

/**
 * A connection as a turn used it, recorded with the turn (`TurnCompleted.aiConnections`): replay
 * builds the same calls and applies the same limits from it, whatever the connection became since.
 */
export const ConnectionAsUsed = Type.Object({
  baseUrl: settingsSchema.baseUrl,
  apiKeySecret: settingsSchema.apiKeySecret,
  model: settingsSchema.model,
  headers: settingsSchema.headers,
  maxTokensPerCall: settingsSchema.maxTokensPerCall,
  callsPerSession: settingsSchema.callsPerSession,
})
export type ConnectionAsUsed = Static<typeof ConnectionAsUsed>

/** The settings a turn uses, each header as its name and value alone. */
export const connectionAsUsed = ({ baseUrl, apiKeySecret, model, headers, maxTokensPerCall, callsPerSession }: AiConnectionSettings): ConnectionAsUsed => ({
  baseUrl,
  apiKeySecret,
  model,
  headers: headers.map(({ name, value }) => ({ name, value })),
  maxTokensPerCall,
  callsPerSession,
})

const AiConnectionCreated = Type.Object({ workspaceId: Uuid, id: Uuid, ...settingsSchema, createdAt: Timestamp })
/** The connection's settings after the change, whole. */
const AiConnectionChanged = Type.Object({ workspaceId: Uuid, id: Uuid, ...settingsSchema, changedAt: Timestamp })
const AiConnectionDeleted = Type.Object({ workspaceId: Uuid, id: Uuid, deletedAt: Timestamp })

export type AiConnectionEvent =
  | { type: 'AiConnectionCreated'; data: Static<typeof AiConnectionCreated> }
  | { type: 'AiConnectionChanged'; data: Static<typeof AiConnectionChanged> }
  | { type: 'AiConnectionDeleted'; data: Static<typeof AiConnectionDeleted> }

export type AiConnectionCommand =
  | { type: 'CreateAiConnection'; data: { workspaceId: string; id: string; settings: AiConnectionSettings; now: string } }
  | { type: 'ChangeAiConnection'; data: { workspaceId: string; id: string; changes: Partial<AiConnectionSettings>; now: string } }
  | { type: 'DeleteAiConnection'; data: { workspaceId: string; id: string; now: string } }

export interface AiConnection extends AiConnectionSettings {
  id: string
  createdAt: string
  updatedAt: string
}

export interface WorkspaceAiConnections {
  /** Live connections by id; read it with {@link aiConnectionWithId}. */
  byId: Readonly<Record<string, AiConnection>>
}

export const aiConnectionWithId = (state: WorkspaceAiConnections, id: string): AiConnection | undefined => (Object.hasOwn(state.byId, id) ? state.byId[id] : undefined)

/** Names compare without case and surrounding spaces, as sectors' do. */
const nameKey = (name: string) => name.trim().toLowerCase()

function refuseTakenName(state: WorkspaceAiConnections, name: string, exceptId?: string): void {
  const taken = Object.values(state.byId).find((connection) => connection.id !== exceptId && nameKey(connection.name) === nameKey(name))
  if (taken) throw new ConflictError(`this workspace has an AI connection named "${taken.name}" already`)
}

const settingsOf = (settings: AiConnectionSettings): AiConnectionSettings => ({ name: settings.name, ...connectionAsUsed(settings) })

const sameSettings = (a: AiConnectionSettings, b: AiConnectionSettings) => JSON.stringify(settingsOf(a)) === JSON.stringify(settingsOf(b))

export const aiConnections: Decider<AiConnectionCommand, WorkspaceAiConnections, AiConnectionEvent> = {
  initialState: { byId: {} },
  eventSchemas: { AiConnectionCreated, AiConnectionChanged, AiConnectionDeleted },

  decide(command, state) {
    switch (command.type) {
      case 'CreateAiConnection': {
        const { workspaceId, id, settings, now } = command.data
        if (aiConnectionWithId(state, id)) return []
        if (Object.keys(state.byId).length >= AI_CONNECTION_LIMITS.perWorkspace) {
          throw new ConflictError(`this workspace holds ${AI_CONNECTION_LIMITS.perWorkspace} AI connections, the most it may; delete one before adding another`)
        }
        refuseTakenName(state, settings.name)
        return [{ type: 'AiConnectionCreated', data: { workspaceId, id, ...settingsOf(settings), createdAt: now } }]
      }
      case 'ChangeAiConnection': {
        const { workspaceId, id, changes, now } = command.data
        const current = aiConnectionWithId(state, id)
        if (!current) throw new NotFoundError(`no AI connection ${id} in this workspace`)
        const next = settingsOf({ ...current, ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) })
        if (sameSettings(current, next)) return []
        if (nameKey(next.name) !== nameKey(current.name)) refuseTakenName(state, next.name, id)
        return [{ type: 'AiConnectionChanged', data: { workspaceId, id, ...next, changedAt: now } }]
      }
      case 'DeleteAiConnection': {
        const { workspaceId, id, now } = command.data
        if (!aiConnectionWithId(state, id)) throw new NotFoundError(`no AI connection ${id} in this workspace`)
        return [{ type: 'AiConnectionDeleted', data: { workspaceId, id, deletedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AiConnectionCreated': {
        const { workspaceId: _workspace, createdAt, ...connection } = event.data
        return { byId: { ...state.byId, [connection.id]: { ...connection, createdAt, updatedAt: createdAt } } }
      }
      case 'AiConnectionChanged': {
        const { workspaceId: _workspace, changedAt, ...connection } = event.data
        const current = aiConnectionWithId(state, connection.id)
        if (!current) return state
        return { byId: { ...state.byId, [connection.id]: { ...connection, createdAt: current.createdAt, updatedAt: changedAt } } }
      }
      case 'AiConnectionDeleted': {
        const { [event.data.id]: _deleted, ...rest } = state.byId
        return { byId: rest }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
