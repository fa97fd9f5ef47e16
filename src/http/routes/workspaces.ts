import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createWorkspace } from '../../commands/tenancy.js'
import { BadRequestError, ForbiddenError } from '../../errors.js'
import { listWorkspaces } from '../../projections/workspaces.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'workspaces', description: 'Workspaces of the organization' }

const WorkspaceItem = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp })

const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/workspaces',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listWorkspaces',
          summary: "List the workspaces of the key's organization",
          description: "A page of the organization's workspaces, oldest first, for an organization-admin key; a workspace key sees its own workspace only.",
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(WorkspaceItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { principal } = request
        const onlyWorkspaceId = principal.role === 'organization-admin' ? undefined : principal.workspaceId
        const { content, totalElements } = await listWorkspaces(deps.db, { organizationId: principal.organizationId, onlyWorkspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/workspaces',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createWorkspace',
          summary: "Create a workspace in the key's organization",
          description: 'Needs an organization-admin key. The time zone (IANA name, e.g. America/Sao_Paulo) sets where the lists\' date ranges start their days; without one they use UTC.',
          body: Type.Object({
            name: Type.String({ minLength: 1, maxLength: 200 }),
            timezone: Type.Optional(Type.String({ description: 'IANA zone, e.g. America/Sao_Paulo' })),
          }, { examples: [{ name: 'Support', timezone: 'America/Sao_Paulo' }] }),
          response: { 201: EmptyBody, ...errorResponses(400, 401, 403, 413, 415) },
        },
      },
      async (request, reply) => {
        if (request.principal.role !== 'organization-admin') throw new ForbiddenError('Only an organization-admin API key can create workspaces')
        const { name, timezone } = request.body
        if (timezone !== undefined && !isTimeZone(timezone)) throw new BadRequestError(`body/timezone: ${timezone} is not an IANA time zone`)
        const { workspaceId } = await createWorkspace(commandContext(deps, request), {
          organizationId: request.principal.organizationId,
          name,
          timezone: timezone ?? null,
        })
        return reply.status(201).header('location', `/v1/workspaces/${workspaceId}`).send()
      },
    )
  }
