import {
  AI_CONNECTION_LIMITS,
  RESERVED_CONNECTION_HEADERS,
  aiConnectionWithId,
  aiConnections,
  aiConnectionsStream,
  connectionAsUsed,
  type AiConnection,
  type ConnectionAsUsed,
  type AiConnectionSettings,
  type ConnectionHeader,
} from '../domain/ai-connection.js'
import { secretNamed, secrets, secretsStream } from '../domain/secret.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import type { EventStore } from '../eventstore/port.js'
import { foldStream } from '../eventstore/stream-state.js'
import { newId } from '../ids.js'
import { checkCallbackUrl, type CallbackPolicy } from './api-keys.js'
import type { CommandContext } from './context.js'
import { handleCommand } from './handle.js'

/** What creating or changing a connection takes: the event store, and the address rules of outside calls. */
export type AiConnectionsContext = CommandContext & { callPolicy: CallbackPolicy }

/** A connection as the API shows it; the key's value is in the secret it names, never here. */
export type AiConnectionView = AiConnection

export type NewAiConnection = Pick<AiConnectionSettings, 'name' | 'baseUrl' | 'apiKeySecret' | 'model'> & Partial<Pick<AiConnectionSettings, 'headers' | 'maxTokensPerCall' | 'callsPerSession'>>

/** The base URL as stored: `{baseUrl}/chat/completions` is what a call asks for. */
function normalizedBaseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new BadRequestError('baseUrl is not a valid URL')
  }
  if (url.search || url.hash) throw new BadRequestError('baseUrl must not carry a query or a fragment: the protocol\'s paths are appended to it')
  return url.href.replace(/\/+$/, '')
}

function checkHeaders(headers: readonly ConnectionHeader[]): void {
  const seen = new Set<string>()
  for (const header of headers) {
    const name = header.name.toLowerCase()
    if (RESERVED_CONNECTION_HEADERS.includes(name)) {
      throw new BadRequestError(`headers: ${header.name} is written by the service (the key goes in apiKeySecret)`)
    }
    if (seen.has(name)) throw new BadRequestError(`headers: ${header.name} appears twice`)
    seen.add(name)
  }
}

async function checkSecretExists(store: EventStore, workspaceId: string, name: string): Promise<void> {
  const { state } = await foldStream(store, secrets, secretsStream(workspaceId))
  if (!secretNamed(state, name)) throw new BadRequestError(`apiKeySecret: this workspace has no secret named "${name}"; PUT /v1/secrets/${name} first`)
}

/** The settings a write may record: every rule the schemas cannot say, checked here once. */
async function checkedSettings<T extends Partial<AiConnectionSettings>>(ctx: AiConnectionsContext, workspaceId: string, settings: T): Promise<T> {
  const checked = { ...settings }
  if (settings.name !== undefined) {
    checked.name = settings.name.trim()
    if (!checked.name) throw new BadRequestError('name must not be blank')
  }
  if (settings.baseUrl !== undefined) {
    checked.baseUrl = normalizedBaseUrl(settings.baseUrl)
    await checkCallbackUrl(checked.baseUrl, ctx.callPolicy, 'baseUrl')
  }
  if (settings.model !== undefined && !settings.model.trim()) throw new BadRequestError('model must not be blank')
  if (settings.headers !== undefined) checkHeaders(settings.headers)
  if (settings.apiKeySecret !== undefined) await checkSecretExists(ctx.store, workspaceId, settings.apiKeySecret)
  return checked
}

export async function createAiConnection(ctx: AiConnectionsContext, workspaceId: string, input: NewAiConnection): Promise<{ id: string }> {
  const id = newId()
  const settings: AiConnectionSettings = await checkedSettings(ctx, workspaceId, {
    ...input,
    headers: input.headers ?? [],
    maxTokensPerCall: input.maxTokensPerCall ?? AI_CONNECTION_LIMITS.maxTokensPerCall.default,
    callsPerSession: input.callsPerSession ?? AI_CONNECTION_LIMITS.callsPerSession.default,
  })
  await handleCommand(ctx.store, aiConnections, aiConnectionsStream(workspaceId), {
    type: 'CreateAiConnection',
    data: { workspaceId, id, settings, now: ctx.now().toISOString() },
  }, ctx.metadata)
  return { id }
}

export async function changeAiConnection(ctx: AiConnectionsContext, workspaceId: string, id: string, changes: Partial<AiConnectionSettings>): Promise<AiConnectionView> {
  // A connection of another workspace is as absent as one that never was: 404 before any other check.
  await aiConnectionOf(ctx, workspaceId, id)
  const checked = await checkedSettings(ctx, workspaceId, changes)
  const result = await handleCommand(ctx.store, aiConnections, aiConnectionsStream(workspaceId), {
    type: 'ChangeAiConnection',
    data: { workspaceId, id, changes: checked, now: ctx.now().toISOString() },
  }, ctx.metadata)
  return aiConnectionWithId(result.state, id)!
}

export async function deleteAiConnection(ctx: CommandContext, workspaceId: string, id: string): Promise<void> {
  await handleCommand(ctx.store, aiConnections, aiConnectionsStream(workspaceId), {
    type: 'DeleteAiConnection',
    data: { workspaceId, id, now: ctx.now().toISOString() },
  }, ctx.metadata)
}

/** The workspace's connections by name (then id); a page of them. */
export async function listAiConnections(ctx: { store: EventStore }, workspaceId: string, paging: { page: number; size: number }): Promise<{ content: AiConnectionView[]; totalElements: number }> {
  const { state } = await foldStream(ctx.store, aiConnections, aiConnectionsStream(workspaceId))
  const all = Object.values(state.byId).sort((a, b) => a.name.localeCompare(b.name, 'en') || (a.id < b.id ? -1 : 1))
  return { content: all.slice(paging.page * paging.size, (paging.page + 1) * paging.size), totalElements: all.length }
}

/** The workspace's connection with that id; 404 when it has none (another workspace's included). */
export async function aiConnectionOf(ctx: { store: EventStore }, workspaceId: string, id: string): Promise<AiConnectionView> {
  const { state } = await foldStream(ctx.store, aiConnections, aiConnectionsStream(workspaceId))
  const connection = aiConnectionWithId(state, id)
  if (!connection) throw new NotFoundError(`no AI connection ${id} in this workspace`)
  return connection
}

/** The workspace's connections of those ids as a turn uses them; a deleted one is left out. */
export async function connectionsAsUsed(store: EventStore, workspaceId: string, ids: readonly string[]): Promise<Record<string, ConnectionAsUsed>> {
  const { state } = await foldStream(store, aiConnections, aiConnectionsStream(workspaceId))
  return Object.fromEntries(ids.flatMap((id) => {
    const connection = aiConnectionWithId(state, id)
    return connection ? [[id, connectionAsUsed(connection)]] : []
  }))
}
