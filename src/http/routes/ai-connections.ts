import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { aiConnectionOf, changeAiConnection, createAiConnection, deleteAiConnection, listAiConnections, type AiConnectionsContext } from '../../commands/ai-connections.js'
import { AI_CONNECTION_LIMITS, ConnectionHeader } from '../../domain/ai-connection.js'
import { LISTED_MODELS } from '../../domain/chat-completions.js'
import { SECRET_NAME_PATTERN } from '../../domain/secret-rules.js'
import { checkAiConnection } from '../../engine/ai-connection-check.js'
import type { AppDeps } from '../app.js'
import { commandContext, outsideCallSettings } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'ai-connections', description: "The chat-completions endpoints a workspace's AI steps call, with the customer's own model and key" }

const limits = AI_CONNECTION_LIMITS
const fields = {
  name: Type.String({ minLength: 1, maxLength: limits.nameLength, description: 'unique in the workspace, compared without case and surrounding spaces' }),
  baseUrl: Type.String({
    minLength: 1,
    maxLength: limits.baseUrlLength,
    description: 'https; the protocol\'s paths are appended to it (`{baseUrl}/chat/completions`, `{baseUrl}/models`), so it usually ends in /v1. The same address rules as webhooks: public addresses only, unless the operator allowed a private range.',
  }),
  apiKeySecret: Type.String({ pattern: SECRET_NAME_PATTERN.source, description: "the name of the workspace secret holding the endpoint's key, sent as `Authorization: Bearer`; the key itself is never shown" }),
  model: Type.String({ minLength: 1, maxLength: limits.modelLength, description: 'the model a call asks for unless its node names another' }),
  headers: Type.Array(ConnectionHeader, {
    maxItems: limits.headers,
    description: 'headers added to every call (an organization or project header, a gateway\'s route); shown back as written, so never a secret. Authorization, Content-Type and the other headers of the protocol are the service\'s.',
  }),
  maxTokensPerCall: Type.Integer({ minimum: limits.maxTokensPerCall.min, maximum: limits.maxTokensPerCall.max, description: `the most tokens an answer may take (\`max_tokens\`); ${limits.maxTokensPerCall.default} when not given` }),
  callsPerSession: Type.Integer({ minimum: limits.callsPerSession.min, maximum: limits.callsPerSession.max, description: `the most calls one session may make through this connection; ${limits.callsPerSession.default} when not given` }),
}

const AiConnection = Type.Object({ id: Uuid, ...fields, createdAt: Timestamp, updatedAt: Timestamp })

const example = { name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', apiKeySecret: 'openai', model: 'gpt-4o-mini' }

const ConnectionCheck = Type.Object({
  ok: Type.Boolean({ description: "true when a flow's call would get through: the endpoint was reached, took the key, and lists the model (or lists none and answered a one-token call)" }),
  models: Type.Array(Type.String(), { maxItems: LISTED_MODELS, description: `the model ids the endpoint lists, at most ${LISTED_MODELS}; empty when it lists none` }),
  problem: Type.Optional(Type.String({ description: 'when not ok, what went wrong in words' })),
  durationMs: Type.Integer({ minimum: 0 }),
})

const IdParams = Type.Object({ id: Uuid })

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const callPolicy = { allowedPrivateCidrs: deps.config.webhookAllowedPrivateCidrs, resolve: deps.resolveHost }
    const connectionsContext = (request: FastifyRequest): AiConnectionsContext => ({ ...commandContext(deps, request), callPolicy })
    const calls = outsideCallSettings(app, deps)

    app.get(
      '/ai-connections',
      {
        // The editor lists the connections an AI step may use.
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listAiConnections',
          summary: "List the AI connections of the key's workspace",
          description: `A page of the workspace's connections in name order; a workspace holds at most ${limits.perWorkspace}.`,
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(AiConnection), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listAiConnections(deps, request.principal.workspaceId, { page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/ai-connections',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createAiConnection',
          summary: "Create an AI connection in the key's workspace",
          description:
            `The secret \`apiKeySecret\` names must exist (\`PUT /v1/secrets/{name}\` first). A name another connection of the workspace has, or a workspace holding ${limits.perWorkspace} connections already, answers 409. ` +
            'The address is checked as a webhook\'s is: a host that is or resolves to a loopback, private or otherwise non-public address is refused unless the operator allowed its range.',
          body: Type.Object(
            { ...fields, headers: Type.Optional(fields.headers), maxTokensPerCall: Type.Optional(fields.maxTokensPerCall), callsPerSession: Type.Optional(fields.callsPerSession) },
            { examples: [example] },
          ),
          response: { 201: EmptyBody, ...errorResponses(400, 401, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const { id } = await createAiConnection(connectionsContext(request), request.principal.workspaceId, request.body)
        return reply.status(201).header('location', `/v1/ai-connections/${id}`).send()
      },
    )

    app.get(
      '/ai-connections/:id',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getAiConnection',
          summary: 'Read an AI connection',
          description: "The connection's settings; the key is in the secret it names and never shown.",
          params: IdParams,
          response: { 200: AiConnection, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => aiConnectionOf(deps, request.principal.workspaceId, request.params.id),
    )

    app.patch(
      '/ai-connections/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateAiConnection',
          summary: 'Change some of an AI connection\'s settings',
          description: 'The fields given replace the connection\'s (`headers` as a whole), checked as on create; the others stay. Answers the connection as it is now.',
          params: IdParams,
          body: Type.Partial(Type.Object(fields), { examples: [{ model: 'gpt-4o' }] }),
          response: { 200: AiConnection, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => changeAiConnection(connectionsContext(request), request.principal.workspaceId, request.params.id, request.body),
    )

    app.delete(
      '/ai-connections/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteAiConnection',
          summary: 'Delete an AI connection',
          description: 'The secret it named stays. Steps that use the connection leave by `error` from then on.',
          params: IdParams,
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await deleteAiConnection(commandContext(deps, request), request.principal.workspaceId, request.params.id)
        return reply.status(204).send()
      },
    )

    app.post(
      '/ai-connections/:id/check',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'checkAiConnection',
          summary: 'Test an AI connection: reach the endpoint with its key and see whether it has the model',
          description:
            "Asks the endpoint for its model list as a flow's call would go (the same address checks, the key read from its secret); only when the endpoint lists no models, makes one call of a single token with the connection's model. Nothing is recorded. " +
            'A connection that does not work answers 200 with `ok: false` and the problem in words.',
          params: IdParams,
          response: { 200: ConnectionCheck, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const connection = await aiConnectionOf(deps, request.principal.workspaceId, request.params.id)
        return checkAiConnection(calls, request.principal.workspaceId, connection, deps.logger)
      },
    )
  }
