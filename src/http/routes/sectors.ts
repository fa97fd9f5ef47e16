import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { createSector, deleteSector, renameSector, type SectorContext } from '../../commands/sectors.js'
import { listSectors } from '../../projections/sectors.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'sectors', description: 'Transfer targets of flows' }

const SectorItem = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp })
const SectorName = Type.String({ minLength: 1, maxLength: 200 })

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const sectorContext = (request: FastifyRequest): SectorContext => ({ ...commandContext(deps, request), db: deps.db })
    app.get(
      '/sectors',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listSectors',
          summary: "List the sectors of the key's workspace",
          description: 'A page of the workspace\'s sectors, the targets of a flow\'s transfer node.',
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(SectorItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listSectors(deps.db, { workspaceId: request.principal.workspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/sectors',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'createSector',
          summary: "Create a sector (a transfer target) in the key's workspace",
          description: 'Names are unique within a workspace, compared without case and surrounding spaces: a name another sector of the workspace has answers 409.',
          body: Type.Object({ name: SectorName }, { examples: [{ name: 'Sales' }] }),
          response: { 201: EmptyBody, ...errorResponses(400, 401, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const { sectorId } = await createSector(sectorContext(request), request.principal, { name: request.body.name })
        return reply.status(201).header('location', `/v1/sectors/${sectorId}`).send()
      },
    )

    app.patch(
      '/sectors/:id',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateSector',
          summary: 'Rename a sector; without a name it answers the sector as it is',
          description: 'Names are unique within a workspace, compared without case and surrounding spaces: a name another sector of the workspace has answers 409.',
          params: Type.Object({ id: Uuid }),
          body: Type.Object({ name: Type.Optional(SectorName) }, { examples: [{ name: 'Inside sales' }] }),
          response: { 200: Type.Object({ id: Uuid, name: Type.String() }), ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => renameSector(sectorContext(request), request.principal, request.params.id, request.body.name),
    )

    app.delete(
      '/sectors/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteSector',
          summary: 'Delete a sector',
          description: 'Flows that transfer to it fail validation on their next save or publish; transfers already made keep their record.',
          params: Type.Object({ id: Uuid }),
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await deleteSector(sectorContext(request), request.principal, request.params.id)
        return reply.status(204).send()
      },
    )
  }
