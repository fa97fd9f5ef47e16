import { apiKey, apiKeyStream } from '../domain/api-key.js'
import type { FlowDefinition } from '../domain/flow-definition.js'
import { PREVIEW_TURN_METADATA, eventKey, messageKey, session, sessionStream, timerTriggerId, type SessionCommand } from '../domain/session.js'
import type { RecordedCall } from '../domain/outside-call.js'
import type { InboundMessage, OutsideEvent, VariableValue } from '../domain/turn.js'
import { NotFoundError } from '../errors.js'
import { newId } from '../ids.js'
import type { ApiKeyPrincipal } from '../projections/api-keys.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand, loadState } from './handle.js'

export interface StartableFlow {
  flowId: string
  /** The published version the session runs. */
  version: number
}

export async function startSession(
  ctx: CommandContext,
  caller: ApiKeyPrincipal,
  input: { flow: StartableFlow; variables: Record<string, VariableValue>; externalId: string | null; ttlSeconds: number },
): Promise<{ sessionId: string; expiresAt: string }> {
  // The principal may come from the authenticator's cache: the key's stream has its callback now.
  const key = await loadState(ctx.store, apiKey, apiKeyStream(caller.apiKeyId))
  return start(ctx, caller, {
    flowId: input.flow.flowId,
    flowVersion: input.flow.version,
    variables: input.variables,
    externalId: input.externalId,
    apiKeyId: caller.apiKeyId,
    callbackUrl: key.status === 'none' ? caller.callbackUrl : key.callbackUrl,
    ttlSeconds: input.ttlSeconds,
  })
}

/** How long a preview session lives without a message: long enough to think, short enough to clean up. */
export const PREVIEW_TTL_SECONDS = 600

/** Who may start and talk to a session: an API key, or the editor (preview sessions of its workspace only). */
export interface SessionCaller {
  workspaceId: string
  organizationId: string
  /** Null for the editor. */
  apiKeyId: string | null
}

/** Starts a preview: the real engine on `definition` (the flow's draft now), with no webhooks. */
export function startPreviewSession(
  ctx: CommandContext,
  caller: SessionCaller,
  input: { flowId: string; definition: FlowDefinition; variables: Record<string, VariableValue> },
): Promise<{ sessionId: string; expiresAt: string }> {
  return start(ctx, caller, {
    flowId: input.flowId,
    flowVersion: 0,
    variables: input.variables,
    externalId: null,
    apiKeyId: caller.apiKeyId,
    callbackUrl: null,
    ttlSeconds: PREVIEW_TTL_SECONDS,
    preview: { definition: input.definition },
  })
}

type StartData = Extract<SessionCommand, { type: 'StartSession' }>['data']

async function start(
  ctx: CommandContext,
  caller: { workspaceId: string; organizationId: string },
  data: Omit<StartData, 'sessionId' | 'workspaceId' | 'organizationId' | 'messageId' | 'now'>,
): Promise<{ sessionId: string; expiresAt: string }> {
  const sessionId = newId()
  const result = await handleCommand(ctx.store, session, sessionStream(sessionId), {
    type: 'StartSession',
    data: { ...data, sessionId, workspaceId: caller.workspaceId, organizationId: caller.organizationId, messageId: newId(), now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId: caller.workspaceId, organizationId: caller.organizationId })
  await awaitReadModels(ctx, result)
  if (result.state.status === 'none') throw new Error(`session ${sessionId} was not started`)
  return { sessionId, expiresAt: result.state.expiresAt }
}

/** Queues an inbound message, answering once it is durable; a repeated `idempotencyKey` answers the first message's id and queues nothing. */
export async function receiveMessage(
  ctx: CommandContext,
  caller: SessionCaller,
  input: { sessionId: string; message: InboundMessage; idempotencyKey: string | null },
): Promise<{ messageId: string }> {
  const messageId = newId()
  const result = await handleCommand(ctx.store, session, sessionStream(input.sessionId), {
    type: 'ReceiveMessage',
    data: {
      sessionId: input.sessionId,
      workspaceId: caller.workspaceId,
      previewsOnly: caller.apiKeyId === null,
      messageId,
      message: input.message,
      idempotencyKey: input.idempotencyKey,
      now: ctx.now().toISOString(),
    },
  }, { ...ctx.metadata, workspaceId: caller.workspaceId, organizationId: caller.organizationId })
  if (result.state.status === 'none') throw new NotFoundError(`session ${input.sessionId} not found`)
  if (result.events.length === 0 && input.idempotencyKey !== null) return { messageId: result.state.idempotencyKeys[messageKey(input.idempotencyKey)]! }
  // No wait for the read models: nothing the 202 promises is in a list, and the engine follows the log.
  return { messageId }
}

export async function expireSession(ctx: CommandContext, sessionId: string): Promise<boolean> {
  const result = await handleCommand(ctx.store, session, sessionStream(sessionId), {
    type: 'ExpireSession',
    data: { sessionId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  return result.events.length > 0
}

/**
 * Queues an outside event for the session, answering once it is durable; a repeated
 * `idempotencyKey` answers the first event's id and queues nothing.
 */
export async function receiveEvent(
  ctx: CommandContext,
  caller: SessionCaller,
  input: { sessionId: string; event: OutsideEvent; idempotencyKey: string | null },
): Promise<{ eventId: string }> {
  const messageId = newId()
  const result = await handleCommand(ctx.store, session, sessionStream(input.sessionId), {
    type: 'ReceiveEvent',
    data: {
      sessionId: input.sessionId,
      workspaceId: caller.workspaceId,
      previewsOnly: caller.apiKeyId === null,
      messageId,
      event: input.event,
      idempotencyKey: input.idempotencyKey,
      now: ctx.now().toISOString(),
    },
  }, { ...ctx.metadata, workspaceId: caller.workspaceId, organizationId: caller.organizationId })
  if (result.state.status === 'none') throw new NotFoundError(`session ${input.sessionId} not found`)
  if (result.events.length === 0 && input.idempotencyKey !== null) return { eventId: result.state.idempotencyKeys[eventKey(input.idempotencyKey)]! }
  return { eventId: messageId }
}

/** Fires a wait's timer (`TimerFired`) if the session still waits there; true when it did. */
export async function fireTimer(ctx: CommandContext, timer: { sessionId: string; nodeId: string; until: string }): Promise<boolean> {
  const messageId = timerTriggerId(timer.sessionId, timer.nodeId, timer.until)
  const current = await loadState(ctx.store, session, sessionStream(timer.sessionId))
  if (current.status === 'none') return false
  const metadata = { ...ctx.metadata, workspaceId: current.workspaceId, organizationId: current.organizationId, ...(current.previewDefinition ? PREVIEW_TURN_METADATA : {}) }
  const result = await handleCommand(ctx.store, session, sessionStream(timer.sessionId), {
    type: 'FireTimer',
    data: { ...timer, messageId, now: ctx.now().toISOString() },
  }, metadata)
  return result.events.length > 0
}

/**
 * Fires a preview session's pending timer now, for a tester who will not wait for it; answers the
 * trigger's id. The sweeper, finding it fired, fires it no more.
 */
export async function fireTimerNow(ctx: CommandContext, caller: SessionCaller, sessionId: string): Promise<{ messageId: string }> {
  const result = await handleCommand(ctx.store, session, sessionStream(sessionId), {
    type: 'FireTimerNow',
    data: { sessionId, workspaceId: caller.workspaceId, previewsOnly: caller.apiKeyId === null, now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId: caller.workspaceId, organizationId: caller.organizationId, ...PREVIEW_TURN_METADATA })
  // The decider refused every other case: the session waits with a timer, fired now or just before.
  const waiting = result.state.status === 'none' ? null : result.state.conversation.waitingAt
  return { messageId: timerTriggerId(sessionId, waiting!.nodeId, waiting!.until!) }
}

/**
 * Records the answer of a call a turn waited for (`OutsideCallAnswered`); nothing when the turn no
 * longer waits for it (answered already by another try, or the session moved on).
 */
export async function recordCallAnswer(
  ctx: CommandContext,
  job: { sessionId: string; messageId: string; workspaceId: string; organizationId: string; preview: boolean },
  call: RecordedCall,
): Promise<boolean> {
  const metadata = { ...ctx.metadata, workspaceId: job.workspaceId, organizationId: job.organizationId, causationId: job.messageId, ...(job.preview ? PREVIEW_TURN_METADATA : {}) }
  const result = await handleCommand(ctx.store, session, sessionStream(job.sessionId), {
    type: 'RecordCallAnswer',
    data: { sessionId: job.sessionId, messageId: job.messageId, call, now: ctx.now().toISOString() },
  }, metadata)
  return result.events.length > 0
}
