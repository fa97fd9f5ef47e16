import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotFoundError } from '../../errors.js'
import { findDelivery, listDeliveries, retryDelivery } from '../../webhooks/deliveries.js'
import { listDestinations } from '../../webhooks/destinations.js'
import { DELIVERY_STATUSES } from '../../store/tables/webhook-deliveries.js'
import { DESTINATION_STATES } from '../../store/tables/webhook-destinations.js'
import type { AppDeps } from '../app.js'
import type { Tag } from '../openapi.js'
import { Direction, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'webhooks', description: 'Webhook deliveries, their attempts, and retries' }

const statusDescription =
  'pending: waiting for its first attempt (or queued again); failed: an attempt failed and another is scheduled; delivered: a 2xx came back; dead: every attempt of the schedule failed; skipped: the key had no callback URL'

const Attempt = Type.Object({
  attempt: Type.Integer({ description: 'counts every attempt of this delivery, across manual retries' }),
  attemptedAt: Timestamp,
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no response came (refused, blocked, timed out)' }),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  responseTruncated: Type.Boolean({ description: 'the response body was longer than the 64 KiB kept' }),
  responseBody: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'only in the detail of one delivery' })),
})

const Delivery = Type.Object({
  id: Uuid,
  sessionId: Uuid,
  messageId: Uuid,
  status: OneOf(DELIVERY_STATUSES, { description: statusDescription }),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  eventIds: Type.Array(Uuid, { description: 'the events this webhook was built from' }),
  body: Type.Unknown({ description: 'the JSON body, exactly as sent' }),
  attemptCount: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  heldByDestination: Type.Boolean({ description: 'pending or failed, and its destination is failing: it waits behind the destination’s probe (GET /v1/webhooks/destinations), whatever nextAttemptAt says' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  deliveredAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  attempts: Type.Array(Attempt),
})

const Destination = Type.Object({
  workspaceId: Uuid,
  destination: Type.String({ description: "the callback URL's origin (scheme, host and port, lower case): deliveries to it share its fair share and its health" }),
  state: OneOf(DESTINATION_STATES, {
    description: 'healthy: deliveries go out as they are due; failing: after failed attempts in a row, its deliveries wait behind one probe attempt at a time, and a 2xx restores it at once',
  }),
  failingSince: Type.Union([Timestamp, Type.Null()]),
  consecutiveFailures: Type.Integer({ description: 'failed attempts since the last 2xx' }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'the last failure, kept after the destination is restored' }),
  lastFailureAt: Type.Union([Timestamp, Type.Null()]),
  nextProbeAt: Type.Union([Timestamp, Type.Null()], { description: 'while failing: when the next probe may go (retrying one of its deliveries probes at once)' }),
  heldDeliveries: Type.Integer({ description: 'its pending and failed deliveries' }),
  updatedAt: Timestamp,
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/webhooks/deliveries',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listDeliveries',
          summary: "Webhook deliveries of the key's workspace, in the order their events happened, with their attempts",
          description: 'A page of deliveries filtered by status and session, each with its attempts.',
          querystring: Type.Object({
            ...pageQuery({ default: 10, maximum: 100 }),
            direction: Direction,
            sessionId: Type.Optional(Uuid),
            status: Type.Optional(OneOf(DELIVERY_STATUSES)),
          }),
          response: { 200: Page(Delivery), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listDeliveries(deps.db, { ...request.query, workspaceId: request.principal.workspaceId })
        return toPage(content, totalElements, page, size)
      },
    )

    app.get(
      '/webhooks/deliveries/:deliveryId',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getDelivery',
          summary: 'One delivery with every attempt and the response bodies received',
          description: 'The signed body as sent, and each attempt\'s status code, timing and response body.',
          params: Type.Object({ deliveryId: Uuid }),
          response: { 200: Delivery, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const delivery = await findDelivery(deps.db, request.principal.workspaceId, request.params.deliveryId)
        if (!delivery) throw new NotFoundError(`delivery ${request.params.deliveryId} not found`)
        return delivery
      },
    )

    app.get(
      '/webhooks/destinations',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'listDestinations',
          summary: "The key's workspace's webhook destinations that have failed, failing ones first",
          description:
            "A destination is a callback URL's origin. Each has a fair share of the delivery (a cap on attempts in flight); after failed attempts in a row it is failing, and its deliveries wait behind one probe at a time until a 2xx restores it. Listed once a destination has failed.",
          querystring: Type.Object({
            ...pageQuery({ default: 10, maximum: 100 }),
            state: Type.Optional(OneOf(DESTINATION_STATES)),
          }),
          response: { 200: Page(Destination), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { page, size, state } = request.query
        const { content, totalElements } = await listDestinations(deps.db, { workspaceId: request.principal.workspaceId, page, size, ...(state ? { state } : {}) })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/webhooks/deliveries/:deliveryId/retry',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'retryDelivery',
          summary: 'Send a dead or delivered webhook again, at once, with the same webhook-id and a fresh retry schedule',
          description: 'A dead or delivered delivery is queued again with a fresh schedule and the same `webhook-id`; a failed one waiting for its next attempt is attempted at once. Answers 202; 409 while the delivery is pending or being sent, or skipped (no callback URL).',
          params: Type.Object({ deliveryId: Uuid }),
          response: { 202: Delivery, ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const retried = await retryDelivery(deps.db, request.principal.workspaceId, request.params.deliveryId, deps.now())
        return reply.status(202).send(retried)
      },
    )
  }
