import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { isDatabaseUnavailable } from '../store/unavailable.js'

/** Seconds a client is asked to wait when the database is away (a restart takes about that long). */
export const DATABASE_RETRY_AFTER_SECONDS = 2

const statusOf = (error: FastifyError | AppError): number => {
  const status = error.statusCode
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500
}

/**
 * Every error leaves in the spec's shape; a 5xx is logged with its request id and says nothing more.
 * The database being unreachable (down, restarting) is a 503 with Retry-After: the request may be
 * repeated, with its Idempotency-Key where it has one.
 */
function answerError(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!(error instanceof AppError) && isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'request failed: database unavailable')
    return reply
      .status(503)
      .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
      .send({ statusCode: 503, message: 'The database is unavailable; try again shortly', error: STATUS_CODES[503] })
  }
  const statusCode = statusOf(error)
  if (statusCode >= 500) request.log.error({ err: error }, 'request failed')
  const headers = 'headers' in error && error.headers ? error.headers : undefined
  if (headers) void reply.headers(headers)
  return reply.status(statusCode).send({
    statusCode,
    message: statusCode >= 500 ? 'Internal Server Error' : error.message,
    error: STATUS_CODES[statusCode] ?? 'Error',
  })
}

/**
 * For fastify's `frameworkErrors` option: the router answers a path it cannot decode (400) or a
 * path parameter over `maxParamLength` (414) before any route, by default with a body of its own
 * that adds a `code`. Here they get the spec's shape, and the request id that no hook adds to them.
 */
export const frameworkErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
  void answerError(error, request, reply.header('x-request-id', request.id))
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler<FastifyError | AppError>(answerError)

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ statusCode: 404, message: `Route ${request.method} ${request.url.split('?')[0]} not found`, error: 'Not Found' }),
  )
}
