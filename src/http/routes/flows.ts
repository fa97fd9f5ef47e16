import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createFlow } from '../../commands/flows.js'
import { FlowDefinition } from '../../domain/flow-definition.js'
import { NotFoundError } from '../../errors.js'
import { FLOW_ORDER_COLUMNS, findFlow, listFlows, type FlowOrder } from '../../projections/flows.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import { DateRangeParam, Direction, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

const FlowItem = Type.Object({
  id: Uuid,
  name: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  workspace: Type.Object({ id: Uuid, name: Type.String() }),
})

const FlowDetail = Type.Composite([
  FlowItem,
  Type.Object({
    publishedVersion: Type.Integer({ description: 'newest published version; sessions run it' }),
    definition: FlowDefinition,
  }),
])

const orderColumns = Object.keys(FLOW_ORDER_COLUMNS) as FlowOrder[]

export const flowRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/flows',
      {
        schema: {
          tags: ['flows'],
          summary: "List the flows of the key's organization",
          querystring: Type.Object({
            ...pageQuery({ default: 10, maximum: 100 }),
            orderBy: Type.Optional(OneOf(orderColumns)),
            direction: Direction,
            workspaceId: Type.Optional(Uuid),
            workspaceName: Type.Optional(Type.String({ minLength: 1, description: "part of the workspace's name, any case" })),
            dateRange: Type.Optional(DateRangeParam),
          }),
          response: { 200: Page(FlowItem), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listFlows(deps.db, {
          ...request.query,
          organizationId: request.principal.organizationId,
          now: deps.now(),
        })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/flows',
      {
        schema: {
          tags: ['flows'],
          summary: "Create a flow in the key's workspace; it is published as version 1 at once",
          body: Type.Object({
            name: Type.String({ minLength: 1, maxLength: 200 }),
            definition: Type.Optional(FlowDefinition),
          }),
          response: { 201: FlowDetail, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request, reply) => {
        const { flowId } = await createFlow(commandContext(deps, request), request.principal, request.body)
        const created = await findFlow(deps.db, { workspaceId: request.principal.workspaceId, id: flowId })
        if (!created) throw new Error(`flow ${flowId} is not in the read model after its creation`)
        return reply.status(201).header('location', `/v1/flows/${flowId}`).send(created)
      },
    )

    app.get(
      '/flows/:id',
      {
        schema: {
          tags: ['flows'],
          summary: 'A flow with its draft definition and published version',
          params: Type.Object({ id: Uuid }),
          response: { 200: FlowDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await findFlow(deps.db, { workspaceId: request.principal.workspaceId, id: request.params.id })
        if (!found) throw new NotFoundError(`flow ${request.params.id} not found`)
        return found
      },
    )
  }
