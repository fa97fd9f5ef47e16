import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Negotiator from 'negotiator'
import { readSessionHistory } from '../../audit/session-history.js'
import { Transcript, buildTranscript, transcriptMarkdown, type StoredSessionEvent } from '../../audit/transcript.js'
import { AppError, NotFoundError } from '../../errors.js'
import type { AppDeps } from '../app.js'
import { ErrorResponse, Uuid, errorResponses } from '../schemas.js'
import { openApiTag } from './sessions.js'

export { openApiTag }

const JSON_TYPE = 'application/json'
const MARKDOWN_TYPE = 'text/markdown'
const OFFERED = [JSON_TYPE, MARKDOWN_TYPE] as const
type Offered = (typeof OFFERED)[number]

class NotAcceptableError extends AppError {
  constructor(message: string) {
    super(406, message)
  }
}

/**
 * The offered type an `Accept` header prefers (highest q, then the most specific range, then JSON
 * first). No header, or an empty one, accepts anything.
 */
export function negotiate(accept: string | undefined): Offered | undefined {
  if (!accept?.trim()) return JSON_TYPE
  return new Negotiator({ headers: { accept } }).mediaType([...OFFERED]) as Offered | undefined
}

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/sessions/:sessionId/transcript',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getSessionTranscript',
          summary: 'The conversation as the user and the bot saw it: JSON, or Markdown with Accept: text/markdown',
          description: 'The inbound and outbound messages in order, with buttons, lists and media as sent.',
          params: Type.Object({ sessionId: Uuid }),
          response: {
            200: {
              description: 'The transcript, oldest entry first',
              content: {
                [JSON_TYPE]: { schema: Transcript },
                [MARKDOWN_TYPE]: { schema: Type.String({ description: 'a readable transcript, one line per entry' }) },
              },
            },
            ...errorResponses(400, 401, 404),
            406: ErrorResponse,
          },
        },
      },
      async (request, reply) => {
        const type = negotiate(request.headers.accept)
        if (!type) throw new NotAcceptableError(`the transcript is available as ${OFFERED.join(' or ')}`)
        const { recorded } = await readSessionHistory(deps.store, request.principal.workspaceId, request.params.sessionId)
        const transcript = buildTranscript(recorded.map((e) => ({ id: e.id, type: e.type, data: e.data }) as StoredSessionEvent))
        if (!transcript) throw new NotFoundError(`session ${request.params.sessionId} not found`)
        void reply.header('vary', 'accept')
        if (type === MARKDOWN_TYPE) return reply.type(`${MARKDOWN_TYPE}; charset=utf-8`).send(transcriptMarkdown(transcript))
        return reply.type(JSON_TYPE).send(transcript)
      },
    )
  }
