import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { registerOAuthClient, revokeOAuthClient } from '../../commands/oauth-clients.js'
import { listOAuthClients } from '../../projections/oauth-clients.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'clients', description: 'OAuth clients that sign the embedded editor in' }

const ClientItem = Type.Object({ clientId: Uuid, name: Type.String(), createdAt: Timestamp })
const CreatedClient = Type.Object({
  clientId: Uuid,
  clientSecret: Type.String({ description: 'Shown only in this response; keep it on your backend' }),
  name: Type.String(),
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/clients',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listClients',
          summary: "List the OAuth clients (embedded editor) of the key's workspace",
          description: 'The workspace\'s OAuth clients for the embedded editor, without their secrets.',
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(ClientItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listOAuthClients(deps.db, { workspaceId: request.principal.workspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/clients',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createClient',
          summary: "Create an OAuth client for the embedded editor in the key's workspace",
          description: 'Answers 201 with the client id and its secret, shown only this once. The customer\'s backend trades them for a one-time editor token (POST /auth/iframe-token).',
          body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { examples: [{ name: 'Helpdesk embed' }] }),
          response: { 201: CreatedClient, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await registerOAuthClient(commandContext(deps, request), request.principal, { name: request.body.name }, deps.clientSecretCost)
        return reply.status(201).send(created)
      },
    )

    app.delete(
      '/clients/:clientId',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'revokeClient',
          summary: 'Revoke an OAuth client; its secret stops working',
          description: 'The client\'s secret stops working at once, and so do the editor tokens it led to (access tokens within 5 seconds).',
          params: Type.Object({ clientId: Uuid }),
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await revokeOAuthClient(commandContext(deps, request), request.principal, request.params.clientId)
        return reply.status(204).send()
      },
    )
  }
