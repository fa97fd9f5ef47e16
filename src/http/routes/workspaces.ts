import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createWorkspace } from '../../commands/tenancy.js'
import { BadRequestError, ForbiddenError } from '../../errors.js'
import { listWorkspaces } from '../../projections/workspaces.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

const WorkspaceItem = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp })

const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

export const workspaceRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/workspaces',
      {
        schema: {
          tags: ['workspaces'],
          summary: "List the workspaces of the key's organization",
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(WorkspaceItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listWorkspaces(deps.db, { organizationId: request.principal.organizationId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/workspaces',
      {
        schema: {
          tags: ['workspaces'],
          summary: "Create a workspace in the key's organization",
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
