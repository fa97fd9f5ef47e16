import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { createCard, createPipeline, deleteCard, updateCard, updatePipeline, type KanbanContext } from '../../commands/kanban.js'
import { CardValues, Tags } from '../../domain/card.js'
import { CurrencyCode, FIELD_TYPES, Field, HexColor, MAX_FIELDS, MAX_STAGES, NUMERIC_FIELD_TYPES, PipelineName, SelectOptions, Stage } from '../../domain/pipeline.js'
import { NotFoundError } from '../../errors.js'
import { findCard, listCards } from '../../projections/cards.js'
import { findPipeline, listPipelines } from '../../projections/pipelines.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'kanban', description: 'Pipelines with stages and fields, and their cards' }

const PipelineResponse = Type.Object({
  id: Uuid,
  name: Type.String(),
  workspaceId: Uuid,
  workspaceName: Type.String(),
  defaultGroupBy: Type.Null(),
  columnAggregation: Type.Null(),
  fields: Type.Array(Field),
  stages: Type.Array(Stage),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

const CardResponse = Type.Object({
  id: Uuid,
  pipelineId: Uuid,
  stageId: Uuid,
  sessionId: Type.Union([Uuid, Type.Null()], { description: 'null when no session is linked' }),
  tags: Type.Array(Type.String()),
  values: CardValues,
  createdAt: Timestamp,
  movedAt: Timestamp,
})

const Order = Type.Integer({ minimum: 0, description: 'position; defaults to the place in the list' })

const StageBody = {
  name: PipelineName,
  order: Type.Optional(Order),
  color: Type.Optional({ ...HexColor, description: '#RRGGBB; default #9E9E9E' }),
}

const FieldBody = {
  name: PipelineName,
  type: OneOf(FIELD_TYPES),
  required: Type.Optional(Type.Boolean({ description: 'default false' })),
  isFeatured: Type.Optional(Type.Boolean({ description: 'default false' })),
  order: Type.Optional(Order),
  options: Type.Optional(Type.Union([SelectOptions, Type.Null()], { description: 'the choices of a select field' })),
  currency: Type.Optional(Type.Union([CurrencyCode, Type.Null()], { description: 'the currency of a currency field' })),
}

const KeepOrAdd = { id: Type.Optional({ ...Uuid, description: 'an existing one to keep or change; without it, a new one' }) }

/** Keyed by field id; checked against the pipeline's fields. In a change, `null` clears a value. */
const ValuesBody = Type.Record(Type.String(), Type.Unknown())

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const kanbanContext = (request: FastifyRequest): KanbanContext => ({ ...commandContext(deps, request), db: deps.db })

    app.get(
      '/kanban/pipelines',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listPipelines',
          summary: "List the pipelines of the key's workspace with their stages and fields",
          description: 'A page of the workspace\'s kanban pipelines.',
          querystring: Type.Object(pageQuery({ default: 20, maximum: 100 })),
          response: { 200: Page(PipelineResponse), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listPipelines(deps.db, { workspaceId: request.principal.workspaceId, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/kanban/pipelines',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createPipeline',
          summary: "Create a pipeline in the key's workspace",
          description: 'Stages are ordered as given; fields (text, number, currency, date, boolean, select, email, phone) define the values cards carry.',
          body: Type.Object({
            name: PipelineName,
            stages: Type.Array(Type.Object(StageBody), { minItems: 1, maxItems: MAX_STAGES }),
            fields: Type.Optional(Type.Array(Type.Object(FieldBody), { maxItems: MAX_FIELDS })),
          }, {
            examples: [{ name: 'Deals', stages: [{ name: 'New' }, { name: 'Won', color: '#4CAF50' }], fields: [{ name: 'Amount', type: 'currency', currency: 'USD', isFeatured: true }] }],
          }),
          response: { 201: PipelineResponse, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await createPipeline(kanbanContext(request), request.principal, request.body)
        return reply.status(201).header('location', `/v1/kanban/pipelines/${created.id}`).send(created)
      },
    )

    app.get(
      '/kanban/pipelines/:id',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getPipeline',
          summary: 'A pipeline with its stages and fields',
          description: 'Stage and field ids are the ones cards and flows refer to.',
          params: Type.Object({ id: Uuid }),
          response: { 200: PipelineResponse, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await findPipeline(deps.db, { workspaceId: request.principal.workspaceId, id: request.params.id })
        if (!found) throw new NotFoundError(`pipeline ${request.params.id} not found`)
        return found
      },
    )

    app.patch(
      '/kanban/pipelines/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updatePipeline',
          summary: 'Rename a pipeline or replace its stages or fields',
          description:
            'A list given replaces the current one: items with the id of an existing stage or field keep or change it, items without an id are added, and those left out are removed. A stage that still holds cards cannot be removed (409).',
          params: Type.Object({ id: Uuid }),
          body: Type.Object({
            name: Type.Optional(PipelineName),
            stages: Type.Optional(Type.Array(Type.Object({ ...KeepOrAdd, ...StageBody }), { minItems: 1, maxItems: MAX_STAGES })),
            fields: Type.Optional(Type.Array(Type.Object({ ...KeepOrAdd, ...FieldBody }), { maxItems: MAX_FIELDS })),
          }, { examples: [{ name: 'Deals 2026' }] }),
          response: { 200: PipelineResponse, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => updatePipeline(kanbanContext(request), request.principal, request.params.id, request.body),
    )

    app.post(
      '/kanban/pipelines/:pipelineId/cards',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createCard',
          summary: 'Create a card in a stage of a pipeline',
          description: 'Values are checked against the pipeline\'s fields; tags follow the card rules (at most 50, each up to 100 characters, no commas, no blanks at either end, no repeats).',
          params: Type.Object({ pipelineId: Uuid }),
          body: Type.Object({
            stageId: Uuid,
            values: Type.Optional(ValuesBody),
            tags: Type.Optional(Tags),
          }, { examples: [{ stageId: '0190a0b0-0000-7000-8000-0000000000a1', values: { '0190a0b0-0000-7000-8000-0000000000b1': 1200 }, tags: ['hot'] }] }),
          response: { 201: CardResponse, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await createCard(commandContext(deps, request), request.principal, request.params.pipelineId, request.body)
        return reply.status(201).header('location', `/v1/kanban/cards/${created.id}`).send(created)
      },
    )

    app.get(
      '/kanban/pipelines/:pipelineId/cards',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listCards',
          summary: 'List the cards of a pipeline, oldest first, with sums of its number and currency fields',
          description: 'A page of cards filtered by stage, tags, creation time and text (q), with the sums of its number and currency fields over every matching card.',
          params: Type.Object({ pipelineId: Uuid }),
          querystring: Type.Object({
            stageId: Type.Optional(Uuid),
            q: Type.Optional(Type.String({ maxLength: 200, description: 'any part of any card value, in any case' })),
            createdAfter: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601 date-time with offset; exclusive' })),
            tags: Type.Optional(Type.String({ description: 'comma-separated; a card matches when it has all of them' })),
            ...pageQuery({ default: 100, maximum: 500 }),
          }),
          response: {
            200: Type.Composite([
              Page(CardResponse),
              Type.Object({ aggregations: Type.Record(Type.String(), Type.Number(), { description: 'per number or currency field id: the sum over every matching card' }) }),
            ]),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (request) => {
        const { pipelineId } = request.params
        const pipeline = await findPipeline(deps.db, { workspaceId: request.principal.workspaceId, id: pipelineId })
        if (!pipeline) throw new NotFoundError(`pipeline ${pipelineId} not found`)
        const { page, size, stageId, q, createdAfter } = request.query
        const { content, totalElements, aggregations } = await listCards(deps.db, {
          pipelineId,
          sumFieldIds: pipeline.fields.filter((f) => NUMERIC_FIELD_TYPES.includes(f.type)).map((f) => f.id),
          stageId,
          q,
          createdAfter,
          tags: request.query.tags?.split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''),
          page,
          size,
        })
        return { ...toPage(content, totalElements, page, size), aggregations }
      },
    )

    app.get(
      '/kanban/cards/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getCard',
          summary: 'A card',
          description: 'A card with its stage, values, tags and the session that made it, if any.',
          params: Type.Object({ id: Uuid }),
          response: { 200: CardResponse, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await findCard(deps.db, { workspaceId: request.principal.workspaceId, id: request.params.id })
        if (!found) throw new NotFoundError(`card ${request.params.id} not found`)
        return found
      },
    )

    app.patch(
      '/kanban/cards/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateCard',
          summary: 'Change a card: merge values (null clears one), replace tags, move it to another stage',
          description: 'Values merge into the card\'s (null clears one); tags, when given, replace the card\'s; a stage id moves it.',
          params: Type.Object({ id: Uuid }),
          body: Type.Object({
            values: Type.Optional(ValuesBody),
            tags: Type.Optional(Tags),
            stageId: Type.Optional(Uuid),
          }, { examples: [{ stageId: '0190a0b0-0000-7000-8000-0000000000a2', values: { '0190a0b0-0000-7000-8000-0000000000b1': null } }] }),
          response: { 200: CardResponse, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => updateCard(commandContext(deps, request), request.principal, request.params.id, request.body),
    )

    app.delete(
      '/kanban/cards/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteCard',
          summary: 'Delete a card',
          description: 'The card leaves its pipeline\'s lists and sums; its history stays in the log.',
          params: Type.Object({ id: Uuid }),
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        await deleteCard(commandContext(deps, request), request.principal, request.params.id)
        return reply.status(204).send()
      },
    )
  }
