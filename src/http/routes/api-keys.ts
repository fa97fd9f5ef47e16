import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { changeApiKey, createApiKey, revokeApiKey } from '../../commands/api-keys.js'
import { listApiKeys } from '../../projections/api-keys.js'
import type { AppDeps } from '../app.js'
import { apiKeyOf } from '../auth.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'api-keys', description: 'API keys, their callback URLs and webhook signing secrets' }

const ROLES = ['workspace', 'organization-admin'] as const
const roleDescription = '`organization-admin` keys manage every workspace of their organization; `workspace` keys only their own'
const Name = Type.String({ minLength: 1, maxLength: 200 })
const CallbackUrl = Type.String({
  maxLength: 2048,
  description: 'https only; no user info, localhost, loopback, private or link-local addresses',
  examples: ['https://hooks.example.com/flow'],
})

const ApiKeyItem = Type.Object({
  id: Uuid,
  name: Type.String(),
  workspaceId: Uuid,
  role: OneOf(ROLES, { description: roleDescription }),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  keyPrefix: Type.String({ description: 'the first characters of the key, to tell keys apart' }),
  createdAt: Timestamp,
})

const CreatedApiKey = Type.Object({
  ...ApiKeyItem.properties,
  apiKey: Type.String({ description: 'Shown only in this response: send it as X-Api-Key' }),
  signingSecret: Type.String({ description: 'Shown only in this response: verifies webhook signatures' }),
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const policy = { allowedPrivateCidrs: deps.config.webhookAllowedPrivateCidrs, resolve: deps.resolveHost }

    app.get(
      '/api-keys',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listApiKeys',
          summary: 'List the API keys this key may manage: the organization for an admin key, its workspace otherwise',
          description: 'Keys are listed without their secrets: an organization-admin key sees every key of its organization, a workspace key those of its workspace.',
          querystring: Type.Object({ ...pageQuery({ default: 10, maximum: 100 }), workspaceId: Type.Optional(Uuid) }),
          response: { 200: Page(ApiKeyItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size, workspaceId } = request.query
        const { content, totalElements } = await listApiKeys(deps.db, { by: apiKeyOf(request), workspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/api-keys',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createApiKey',
          summary: "Create an API key; the key and its webhook signing secret are shown once",
          description: 'Answers 201 with the key and its webhook signing secret, both shown only this once. A callback URL must be https and resolve to a public address (private ranges are refused unless the operator allows them).',
          body: Type.Object({
            name: Name,
            callbackUrl: CallbackUrl,
            workspaceId: Type.Optional(Uuid),
            role: OneOf(ROLES, { default: 'workspace', description: `${roleDescription}; only an admin key may create admin keys` }),
          }, { examples: [{ name: 'CRM integration', callbackUrl: 'https://hooks.example.com/flow', role: 'workspace' }] }),
          response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 404, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await createApiKey(commandContext(deps, request), apiKeyOf(request), request.body, policy)
        return reply.status(201).send(created)
      },
    )

    app.patch(
      '/api-keys/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateApiKey',
          summary: "Rename a key or change its callback URL; without either it answers the key as it is",
          description: 'A new callback URL applies to sessions started after the change; running sessions keep the one they started with.',
          params: Type.Object({ id: Uuid }),
          body: Type.Object({ name: Type.Optional(Name), callbackUrl: Type.Optional(CallbackUrl) }, { examples: [{ callbackUrl: 'https://hooks.example.com/v2/flow' }] }),
          response: { 200: ApiKeyItem, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (request) => {
        const { name, callbackUrl } = request.body
        return changeApiKey(commandContext(deps, request), request.params.id, { name, callbackUrl }, { ...policy, by: apiKeyOf(request) })
      },
    )

    app.delete(
      '/api-keys/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key (with another key); it stops working within 5 seconds',
          description: 'A key cannot revoke itself. Processes that cached it stop accepting it within 5 seconds; sessions it started keep their webhooks.',
          params: Type.Object({ id: Uuid }),
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        await revokeApiKey(commandContext(deps, request), request.params.id, { by: apiKeyOf(request) })
        return reply.status(204).send()
      },
    )
  }
