import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { changeVariable, defineVariable, removeVariable } from '../../commands/variables.js'
import { VARIABLE_TYPES, VariableName } from '../../domain/variables.js'
import { VariableValue } from '../../domain/turn.js'
import { listVariables } from '../../projections/variables.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'variables', description: 'Workspace variables that flows read and sessions pass' }

const VariableType = OneOf(VARIABLE_TYPES)
const Description = Type.String({ maxLength: 1000 })

const Variable = Type.Object({
  id: Uuid,
  name: Type.String(),
  type: VariableType,
  description: Type.Union([Type.String(), Type.Null()]),
  defaultValue: Type.Union([VariableValue, Type.Null()], { description: 'given to sessions that do not pass this variable; null when none' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/variables',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listVariables',
          summary: "List the variables of the key's workspace, oldest first",
          description: 'A page of the workspace\'s variables with their types and defaults.',
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(Variable), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listVariables(deps.db, { workspaceId: request.principal.workspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/variables',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'createVariable',
          summary: "Define a variable in the key's workspace; flows use it by name, sessions pass its value",
          description: 'Names are unique within a workspace and never change; the type (string, number, boolean, object) checks the values sessions pass and flows save.',
          body: Type.Object({
            name: Type.String({ ...VariableName, description: 'unique in the workspace; letters, digits and _, not starting with a digit; not a system variable' }),
            type: VariableType,
            description: Type.Optional(Description),
            defaultValue: Type.Optional(VariableValue),
          }, { examples: [{ name: 'customer_name', type: 'string', description: "the contact's first name", defaultValue: 'there' }] }),
          response: { 201: Variable, ...errorResponses(400, 401, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await defineVariable(commandContext(deps, request), request.principal, request.body)
        return reply.status(201).header('location', `/v1/variables/${created.id}`).send(created)
      },
    )

    app.patch(
      '/variables/:id',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateVariable',
          summary: 'Change the description or default of a variable (null clears it); name and type never change',
          description: 'A default must have the variable\'s type; null clears the description or the default.',
          params: Type.Object({ id: Uuid }),
          body: Type.Object({
            name: Type.Optional(Type.String({ description: 'accepted only unchanged' })),
            type: Type.Optional(VariableType),
            description: Type.Optional(Type.Union([Description, Type.Null()])),
            defaultValue: Type.Optional(Type.Union([VariableValue, Type.Null()])),
          }, { examples: [{ description: 'first name, as the contact typed it', defaultValue: null }] }),
          response: { 200: Variable, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (request) => changeVariable(commandContext(deps, request), request.principal, request.params.id, request.body),
    )

    app.delete(
      '/variables/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteVariable',
          summary: 'Remove a variable; flows that use it fail validation on their next save or publish',
          description: 'Sessions that hold a value keep it; new sessions cannot pass one.',
          params: Type.Object({ id: Uuid }),
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await removeVariable(commandContext(deps, request), request.principal, request.params.id)
        return reply.status(204).send()
      },
    )
  }
