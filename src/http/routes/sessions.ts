import { randomInt } from 'node:crypto'
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { fireTimerNow, receiveEvent, receiveMessage, startPreviewSession, startSession } from '../../commands/sessions.js'
import { loadState } from '../../commands/handle.js'
import { flow as flowDecider, flowStream, versionForNewSession } from '../../domain/flow.js'
import { EVENTS_KEPT, VariableValue, pendingTimer } from '../../domain/turn.js'
import { EVENT_NAME_PATTERN } from '../../domain/nodes/wait-for-event.js'
import { TurnFailureReason } from '../../domain/session.js'
import { deliveriesByEvent } from '../../webhooks/deliveries.js'
import { DELIVERY_STATUSES } from '../../store/tables/webhook-deliveries.js'
import { EventEnvelope, toEnvelope } from '../../audit/envelope.js'
import { readSessionHistory } from '../../audit/session-history.js'
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js'
import { checkSessionVariables } from '../../projections/variables.js'
import { FlowVersions, toRunnable } from '../../engine/flow-versions.js'
import { findFlow } from '../../projections/flows.js'
import { SESSION_LOG_ORDER_COLUMNS, listSessionLogs, type SessionLogOrder } from '../../projections/session-logs.js'
import type { AppDeps } from '../app.js'
import { apiKeyOf, sessionCallerOf } from '../auth.js'
import { commandContext } from '../context.js'
import { SendMessageBody, toInboundMessage } from '../inbound-message.js'
import type { Tag } from '../openapi.js'
import { DateRangeParam, Direction, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage, OPTIONAL_BODY } from '../schemas.js'

export const openApiTag: Tag = { name: 'sessions', description: 'Conversations with a flow: start one, send it messages; the answers arrive by webhook' }

const SessionCreated = Type.Object({ sessionId: Uuid, status: Type.Literal('active'), expiresAt: Timestamp })
const MessageAccepted = Type.Object({ messageId: Uuid, status: Type.Literal('queued') })

/** The most JSON an outside event's data may hold. */
const EVENT_DATA_BYTES = 16 * 1024
const PostEventBody = Type.Object({
  name: Type.String({ pattern: EVENT_NAME_PATTERN.source, description: "what happened, as the flow's waitForEvent nodes name it (payment.confirmed)" }),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `saved in the waiting node's saveAs; at most ${EVENT_DATA_BYTES} bytes of JSON` })),
}, { examples: [{ name: 'payment.confirmed', data: { amount: 120.5, currency: 'BRL' } }] })
const EventAccepted = Type.Object({ eventId: Uuid, status: Type.Literal('queued') })
// One state, two words: the spec names a live session `active` on the session and `running` in its
// log. The descriptions say the one word the dashboard shows for each state.
const LogStatus = OneOf(['running', 'completed', 'timeout', 'error'] as const, {
  description: '`running`: the session is active (the same state as `active` on GET /v1/sessions/{sessionId}; the dashboard says Active); `completed` (Completed), `timeout` (Timed out), `error` (Failed)',
})
const LogEntry = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  flowId: Uuid,
  externalId: Type.Union([Type.String(), Type.Null()]),
  status: LogStatus,
  warnings: Type.Integer(),
  startedAt: Timestamp,
  expiresAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
})
const SessionDetail = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  flowId: Uuid,
  flowVersion: Type.Integer({ description: 'the published version it runs; 0 for a preview, which runs the draft it started on' }),
  preview: Type.Boolean({ description: 'a preview session (POST /v1/flows/{id}/preview-sessions): no webhooks, left out of logs and analytics' }),
  externalId: Type.Union([Type.String(), Type.Null()]),
  status: OneOf(['active', 'completed', 'timeout', 'error'] as const, {
    description: '`active`: it takes messages (its log says `running`; the dashboard says Active); `completed` (Completed), `timeout` (Timed out), `error` (Failed)',
  }),
  variables: Type.Record(Type.String(), VariableValue),
  waitingAt: Type.Union([Type.String({ description: 'the node the conversation waits at: a question awaiting a reply, a wait for an outside event or a delay' }), Type.Null()]),
  timer: Type.Union([Type.Object({ nodeId: Type.String(), dueAt: Timestamp }), Type.Null()], {
    description: "the waiting node's pending timer (a question's next reminder or timeout, a wait's timeout, a delay's end): a turn for it runs when due, unless a reply or event ends the wait first",
  }),
  pendingMessages: Type.Integer({ description: 'inbound messages not yet processed' }),
  warnings: Type.Integer(),
  modelUsage: Type.Object(
    { calls: Type.Integer({ minimum: 0 }), promptTokens: Type.Integer({ minimum: 0 }), completionTokens: Type.Integer({ minimum: 0 }) },
    { description: "the model calls the session's AI steps made and the tokens they took, as the endpoints counted them" },
  ),
  failureReason: Type.Union([TurnFailureReason, Type.Null()], {
    description: 'why the session ended in error when the engine could not complete a turn (engine_error, invalid_turn); null otherwise',
  }),
  startedAt: Timestamp,
  expiresAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
})
const SessionEventEntry = Type.Composite([
  EventEnvelope,
  Type.Object({
    webhookDelivery: Type.Union([Type.Object({ id: Uuid, status: OneOf(DELIVERY_STATUSES) }), Type.Null()], {
      description: 'the webhook built from this event (GET /v1/webhooks/deliveries/{id}); null when it reports nothing or the outbox has not reached it yet',
    }),
  }),
])

const logOrderColumns = Object.keys(SESSION_LOG_ORDER_COLUMNS) as SessionLogOrder[]

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const flowVersions = new FlowVersions(deps.store)

    const readSession = (workspaceId: string, sessionId: string) => readSessionHistory(deps.store, workspaceId, sessionId)

    app.post(
      '/sessions/flows/:flowId/create',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createSession',
          summary: 'Start a session of a flow; its first response goes to the callback URL',
          description: 'Runs the flow\'s live version (or, during a gradual release, the released version for its share of sessions; the session\'s `flowVersion` says which). Answers 201 with the session id once the start is recorded; the engine\'s first turn reaches the key\'s callback URL as a signed webhook.',
          params: Type.Object({ flowId: Uuid }),
          body: Type.Object({
            variables: Type.Optional(Type.Record(Type.String(), VariableValue, { description: 'values of workspace variables, by name' })),
            externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'identifier of the external contact' })),
          }, { description: OPTIONAL_BODY, examples: [{ variables: { customer_name: 'Ana' }, externalId: '5511999990000' }] }),
          response: { 201: SessionCreated, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
        // The spec makes the body optional: no body means no variables.
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request, reply) => {
        const flow = await findFlow(deps.db, { workspaceId: request.principal.workspaceId, id: request.params.flowId })
        if (!flow) throw new NotFoundError(`flow ${request.params.flowId} not found`)
        const variables = await checkSessionVariables(deps.db, request.principal.workspaceId, request.body.variables ?? {})
        if (variables.problems.length) throw new BadRequestError(variables.problems.join('; '))
        // Chance picks the version during a gradual release, once: the session records the one it starts on.
        const version = versionForNewSession(flow.release, randomInt(2 ** 47) / 2 ** 47)
        const published = await flowVersions.get(flow.id, version)
        if (typeof published === 'string') throw new ConflictError(`flow ${flow.id} cannot run: ${published}`)
        const { sessionId, expiresAt } = await startSession(commandContext(deps, request), apiKeyOf(request), {
          flow: { flowId: flow.id, version },
          variables: variables.values,
          externalId: request.body.externalId ?? null,
          ttlSeconds: published.settings?.sessionTtlSeconds ?? deps.config.sessionTtlSeconds,
        })
        return reply.status(201).header('location', `/v1/sessions/${sessionId}`).send({ sessionId, status: 'active' as const, expiresAt })
      },
    )

    app.post(
      '/sessions/:sessionId/message',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'sendMessage',
          summary: "Send the user's message into an active session; the flow answers by webhook",
          description: 'Answers 202 once the message is recorded; the engine\'s turn reaches the callback URL as a signed webhook, in order. 409 when the session is no longer active. An Idempotency-Key makes a retry answer the same message. The editor\'s token reaches preview sessions of its workspace.',
          params: Type.Object({ sessionId: Uuid }),
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
          body: SendMessageBody,
          response: { 202: MessageAccepted, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
        },
        config: { editor: true },
      },
      async (request, reply) => {
        const { messageId } = await receiveMessage(commandContext(deps, request), sessionCallerOf(request), {
          sessionId: request.params.sessionId,
          message: toInboundMessage(request.body),
          idempotencyKey: request.headers['idempotency-key'] ?? null,
        })
        return reply.status(202).send({ messageId, status: 'queued' as const })
      },
    )

    app.post(
      '/sessions/:sessionId/events',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'postSessionEvent',
          summary: 'Post an outside event (a payment confirmed, an order shipped) into an active session',
          description: `Answers 202 once the event is recorded. A waitForEvent node waiting for its name goes on by \`received\` with \`data\` saved; an event no node waits for yet is kept (at most ${EVENTS_KEPT} per session, 409 beyond) for the next wait of its name. 409 when the session is no longer active. An Idempotency-Key makes a retry answer the same event. The editor's token reaches preview sessions of its workspace.`,
          params: Type.Object({ sessionId: Uuid }),
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
          body: PostEventBody,
          response: { 202: EventAccepted, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
        },
        config: { editor: true },
      },
      async (request, reply) => {
        const data = request.body.data ?? {}
        const size = Buffer.byteLength(JSON.stringify(data))
        if (size > EVENT_DATA_BYTES) throw new BadRequestError(`body/data is ${size} bytes of JSON; an event's data holds at most ${EVENT_DATA_BYTES}`)
        const { eventId } = await receiveEvent(commandContext(deps, request), sessionCallerOf(request), {
          sessionId: request.params.sessionId,
          event: { name: request.body.name, data },
          idempotencyKey: request.headers['idempotency-key'] ?? null,
        })
        return reply.status(202).send({ eventId, status: 'queued' as const })
      },
    )

    app.post(
      '/sessions/:sessionId/timer/fire',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'firePreviewTimer',
          summary: "Fire a preview session's pending timer now",
          description:
            "For testing a flow that waits for time: the preview's pending timer (a question's reminder or reply timeout, a wait's timeout, a delay's end) fires at once, and the engine runs its turn as it would when due. Answers 202 with the trigger's id; firing it again before its turn answers the same id. 409 for a session that is not a preview, has no pending timer or is no longer active. The editor's token reaches preview sessions of its workspace.",
          params: Type.Object({ sessionId: Uuid }),
          response: { 202: MessageAccepted, ...errorResponses(400, 401, 403, 404, 409) },
        },
        config: { editor: true },
      },
      async (request, reply) => {
        const { messageId } = await fireTimerNow(commandContext(deps, request), sessionCallerOf(request), request.params.sessionId)
        return reply.status(202).send({ messageId, status: 'queued' as const })
      },
    )

    app.post(
      '/flows/:flowId/preview-sessions',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createPreviewSession',
          summary: "Start a preview session of the flow's current draft",
          description:
            "Runs the draft as it is now on the real engine. A preview sends no webhooks, moves no real kanban card, is left out of session logs (unless `preview=true`) and analytics, and expires after 10 minutes without a message. Follow it with GET /v1/sessions/{sessionId}/stream and talk to it with POST /v1/sessions/{sessionId}/message; the editor's token reaches both.",
          params: Type.Object({ flowId: Uuid }),
          body: Type.Object({
            variables: Type.Optional(Type.Record(Type.String(), VariableValue, { description: 'values of workspace variables, by name' })),
          }, { description: OPTIONAL_BODY, examples: [{ variables: { customer_name: 'Ana' } }] }),
          response: { 201: SessionCreated, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
        },
        config: { editor: true },
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request, reply) => {
        const { workspaceId } = request.principal
        const state = await loadState(deps.store, flowDecider, flowStream(request.params.flowId))
        if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`flow ${request.params.flowId} not found`)
        const variables = await checkSessionVariables(deps.db, workspaceId, request.body.variables ?? {})
        if (variables.problems.length) throw new BadRequestError(variables.problems.join('; '))
        const runnable = toRunnable(state.draft)
        if (typeof runnable === 'string') throw new ConflictError(`the draft of flow ${state.flowId} cannot run: ${runnable}`)
        const { sessionId, expiresAt } = await startPreviewSession(commandContext(deps, request), sessionCallerOf(request), {
          flowId: state.flowId,
          definition: state.draft,
          variables: variables.values,
        })
        return reply.status(201).header('location', `/v1/sessions/${sessionId}`).send({ sessionId, status: 'active' as const, expiresAt })
      },
    )

    app.get(
      '/sessions/logs',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listSessionLogs',
          summary: "Session logs of the key's organization",
          description: 'A page of sessions, filtered by workspace, flow, status, date range (in the workspace\'s time zone) and session id, ordered as asked.',
          querystring: Type.Object({
            ...pageQuery({ default: 10, maximum: 100 }),
            orderBy: Type.Optional(OneOf(logOrderColumns)),
            direction: Direction,
            workspaceId: Type.Optional(Uuid),
            dateRange: Type.Optional(DateRangeParam),
            sessionId: Type.Optional(Uuid),
            status: Type.Optional(LogStatus),
            preview: Type.Optional(Type.Boolean({ default: false, description: 'true: the logs of preview sessions (the editor\'s test panel) instead of the others' })),
          }),
          response: { 200: Page(LogEntry), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listSessionLogs(deps.db, { ...request.query, organizationId: request.principal.organizationId, now: deps.now() })
        return toPage(content, totalElements, page, size)
      },
    )

    app.get(
      '/sessions/:sessionId',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getSession',
          summary: 'A session as it stands: status, variables, the question it waits at',
          description: 'Status, variables, the node it waits at and, for a session that ended in error, the reason.',
          params: Type.Object({ sessionId: Uuid }),
          response: { 200: SessionDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { state } = await readSession(request.principal.workspaceId, request.params.sessionId)
        return {
          id: state.sessionId,
          workspaceId: state.workspaceId,
          flowId: state.flowId,
          flowVersion: state.flowVersion,
          preview: state.previewDefinition !== null,
          externalId: state.externalId,
          status: state.status,
          variables: state.conversation.variables,
          waitingAt: state.conversation.waitingAt?.nodeId ?? null,
          timer: pendingTimer(state.conversation.waitingAt),
          pendingMessages: state.pending.length,
          warnings: state.warnings,
          modelUsage: state.modelUsage,
          failureReason: state.failureReason,
          startedAt: state.startedAt,
          expiresAt: state.expiresAt,
          finishedAt: state.finishedAt,
        }
      },
    )

    app.get(
      '/sessions/:sessionId/events',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listSessionEvents',
          summary: "The session's full event history, oldest first",
          description: 'Every recorded event of the session with its position, and for each turn the webhook delivery it made: for auditors.',
          params: Type.Object({ sessionId: Uuid }),
          querystring: Type.Object(pageQuery({ default: 100, maximum: 500 })),
          response: { 200: Page(SessionEventEntry), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { recorded } = await readSession(request.principal.workspaceId, request.params.sessionId)
        const deliveries = await deliveriesByEvent(deps.db, request.params.sessionId)
        const content = recorded.slice(page * size, (page + 1) * size).map((e) => ({ ...toEnvelope(e), webhookDelivery: deliveries.get(e.id) ?? null }))
        return toPage(content, recorded.length, page, size)
      },
    )
  }
