import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { changeWorkspace, createWorkspace } from '../../commands/tenancy.js'
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.js'
import { getWorkspace, listWorkspaces } from '../../projections/workspaces.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'workspaces', description: 'Workspaces of the organization' }

const WorkspaceItem = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp })
const TimeZone = Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone, e.g. America/Sao_Paulo' })
const WorkspaceDetail = Type.Object({
  id: Uuid,
  name: Type.String(),
  createdAt: Timestamp,
  timezone: Type.Union([TimeZone, Type.Null()], { description: "Where the lists' date ranges start their days; null is UTC" }),
})

/** A 400 unless `zone` is an IANA time zone this runtime knows. */
const checkTimeZone = (zone: string | null | undefined): void => {
  if (typeof zone === 'string' && !isTimeZone(zone)) throw new BadRequestError(`body/timezone: ${zone} is not an IANA time zone`)
}

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
            timezone: Type.Optional(TimeZone),
          }, { examples: [{ name: 'Support', timezone: 'America/Sao_Paulo' }] }),
          response: { 201: EmptyBody, ...errorResponses(400, 401, 403, 413, 415) },
        },
      },
      async (request, reply) => {
        if (request.principal.role !== 'organization-admin') throw new ForbiddenError('Only an organization-admin API key can create workspaces')
        const { name, timezone } = request.body
        checkTimeZone(timezone)
        const { workspaceId } = await createWorkspace(commandContext(deps, request), {
          organizationId: request.principal.organizationId,
          name,
          timezone: timezone ?? null,
        })
        return reply.status(201).header('location', `/v1/workspaces/${workspaceId}`).send()
      },
    )

    /** A workspace the caller reaches: any of its organization for an organization-admin key, its own for a workspace key. */
    const reachable = async (request: FastifyRequest, id: string) => {
      const { principal } = request
      const found = principal.role === 'organization-admin' || id === principal.workspaceId ? await getWorkspace(deps.db, principal.organizationId, id) : undefined
      if (!found) throw new NotFoundError(`workspace ${id} not found`)
      return found
    }

    app.get(
      '/workspaces/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getWorkspace',
          summary: 'Read a workspace, with its time zone',
          description: "Any workspace of the organization for an organization-admin key; a workspace key reads its own (another answers 404).",
          params: Type.Object({ id: Uuid }),
          response: { 200: WorkspaceDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => reachable(request, request.params.id),
    )

    app.patch(
      '/workspaces/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateWorkspace',
          summary: 'Rename a workspace or change its time zone',
          description:
            "Needs an organization-admin key. What the body leaves out stays; `timezone: null` goes back to UTC. Lists take the new time zone's days at once; the records keep their instants.",
          params: Type.Object({ id: Uuid }),
          body: Type.Object(
            { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), timezone: Type.Optional(Type.Union([TimeZone, Type.Null()])) },
            { examples: [{ name: 'Support Brazil', timezone: 'America/Sao_Paulo' }] },
          ),
          response: { 200: WorkspaceDetail, ...errorResponses(400, 401, 403, 404, 413, 415) },
        },
      },
      async (request) => {
        const { principal } = request
        await reachable(request, request.params.id)
        if (principal.role !== 'organization-admin') throw new ForbiddenError('Only an organization-admin API key can change a workspace')
        const { name, timezone } = request.body
        checkTimeZone(timezone)
        await changeWorkspace(commandContext(deps, request), { workspaceId: request.params.id, organizationId: principal.organizationId, name, timezone })
        return reachable(request, request.params.id)
      },
    )
  }
