import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { deleteSecret, listSecrets, putSecret, type SecretsContext } from '../../commands/secrets.js'
import { MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_WORKSPACE, SecretName } from '../../domain/secret.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'secrets', description: 'Write-only workspace secrets that flows use at call time; never read back' }

const Secret = Type.Object({ name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp }, { description: 'A secret without its value, which no answer ever holds' })

const NameParams = Type.Object({
  name: Type.String({ ...SecretName, description: '1 to 64 letters, digits or _; case-sensitive' }),
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const secretsContext = (request: FastifyRequest): SecretsContext => ({ ...commandContext(deps, request), secrets: deps.secrets })

    app.get(
      '/secrets',
      {
        // The editor lists the names a flow's httpRequest may read; no route answers a value.
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listSecrets',
          summary: "List the secrets of the key's workspace by name, without their values",
          description: 'A page of names and dates, in name order. No endpoint returns a value.',
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(Secret), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listSecrets(deps, request.principal.workspaceId, { page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.put(
      '/secrets/:name',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'putSecret',
          summary: 'Create a secret, or replace its value',
          description:
            `201 when the name was free, 200 when its value was replaced; the answer never holds the value. A value is 1 to ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8. ` +
            `A workspace holds at most ${MAX_SECRETS_PER_WORKSPACE} secrets: another new name is a 409. ` +
            'A replaced value is unreadable from then on, in the events too (its data key is deleted).',
          params: NameParams,
          body: Type.Object(
            { value: Type.String({ minLength: 1, maxLength: MAX_SECRET_VALUE_BYTES, writeOnly: true, description: `the secret, at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8` }) },
            { examples: [{ value: 'token-from-the-shop-api' }] },
          ),
          response: { 200: Secret, 201: Secret, ...errorResponses(400, 401, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const { secret, created } = await putSecret(secretsContext(request), request.principal.workspaceId, request.params.name, request.body.value)
        if (created) void reply.status(201).header('location', `/v1/secrets/${secret.name}`)
        return secret
      },
    )

    app.delete(
      '/secrets/:name',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteSecret',
          summary: 'Delete a secret; its value is unreadable from then on, in the events too',
          description: 'Its data keys are deleted (crypto-shredding): the ciphertexts its events hold can no longer be opened. Flows that use it find no value.',
          params: NameParams,
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await deleteSecret(secretsContext(request), request.principal.workspaceId, request.params.name)
        return reply.status(204).send()
      },
    )
  }
