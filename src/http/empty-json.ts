import type { FastifyInstance } from 'fastify'

/**
 * Takes `Content-Type: application/json` with no body at all as no body, as curl and many clients
 * send it: a route whose body is optional answers as without one, and a route that needs one says
 * that its body must be an object, rather than fastify's "Body cannot be empty".
 */
export function acceptEmptyJson(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body.length === 0 ? done(null, undefined) : json(request, body.toString(), done),
  )
}
