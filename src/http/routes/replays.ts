import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { flowOf } from '../../commands/conversation-tests.js'
import { replayOf, requestReplay, type ReplaysContext } from '../../commands/replays.js'
import { DifferingSession, REPLAY_LIMITS, ReplaySelection, SessionStatusChoice } from '../../domain/replay.js'
import { listReplays } from '../../projections/replays.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { MAX_INT32, OPTIONAL_BODY, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage } from '../schemas.js'

export const openApiTag: Tag = { name: 'flow-replays', description: "Real sessions of a version played again against the flow's draft, to see where it would answer differently" }

const Count = Type.Integer({ minimum: 0 })

const ReplaySummary = Type.Object({
  id: Uuid,
  version: Type.Integer({ minimum: 1, description: 'the published version whose sessions are replayed' }),
  draftVersion: Type.Integer({ minimum: 1, description: 'the draft they are replayed against, as it was when asked' }),
  status: Type.Union([Type.Literal('running'), Type.Literal('finished')]),
  total: Type.Integer({ minimum: 0, description: 'sessions chosen' }),
  checked: Type.Integer({ minimum: 0, description: 'sessions played so far' }),
  differingCount: Type.Integer({ minimum: 0, description: 'sessions whose turns the draft would change' }),
  requestedAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
})

const ReplayDetail = Type.Composite([
  ReplaySummary,
  Type.Object({
    selection: ReplaySelection,
    differing: Type.Array(DifferingSession, { description: `each differing session with its first differing turn, side by side; the first ${REPLAY_LIMITS.differingKept} found` }),
  }),
])

const FlowParams = Type.Object({ id: Uuid })

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const replaysContext = (request: FastifyRequest): ReplaysContext => ({ ...commandContext(deps, request), db: deps.db })

    app.post(
      '/flows/:id/replays',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'replayFlowSessions',
          summary: "Replay real sessions of a version against the flow's draft, in the background",
          description:
            `Chooses sessions of \`version\` (the live one without it): the newest \`sessions.last\` (${REPLAY_LIMITS.defaultSessions} unless told, at most ${REPLAY_LIMITS.sessions}), started in [\`from\`, \`to\`), of a \`status\`. ` +
            "Each is played again against the draft as it is now, turn by turn, from its recorded messages, events, timers, choices and outside answers: nothing is sent, no card moves, nothing outside is called. " +
            `Answers 202 at once; GET the replay for its progress and the sessions that would differ. An organization has at most ${REPLAY_LIMITS.unfinishedPerOrganization} replays unfinished (409 beyond) and they run one at a time.`,
          params: FlowParams,
          body: Type.Object(
            {
              version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT32, description: 'the published version whose sessions are replayed; the live one when absent' })),
              sessions: Type.Optional(
                Type.Object(
                  {
                    last: Type.Optional(Type.Integer({ minimum: 1, maximum: REPLAY_LIMITS.sessions, description: `the newest this many; ${REPLAY_LIMITS.defaultSessions} when absent` })),
                    from: Type.Optional(Timestamp),
                    to: Type.Optional(Timestamp),
                    status: Type.Optional(SessionStatusChoice),
                  },
                  { description: 'which sessions of the version: started in [from, to), of a status' },
                ),
              ),
            },
            { description: OPTIONAL_BODY, examples: [{}, { version: 1, sessions: { last: 500, status: 'completed' } }] },
          ),
          response: { 202: Type.Object({ replayId: Uuid, status: Type.Literal('running'), total: Count }), ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request, reply) => {
        const { replayId, total } = await requestReplay(replaysContext(request), request.principal, request.params.id, request.body)
        return reply.status(202).header('location', `/v1/flows/${request.params.id}/replays/${replayId}`).send({ replayId, status: 'running' as const, total })
      },
    )

    app.get(
      '/flows/:id/replays',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listFlowReplays',
          summary: "A flow's replays, newest first",
          description: 'A page of the replays of the flow, each with its progress and how many sessions differ.',
          params: FlowParams,
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(ReplaySummary), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        await flowOf(deps, request.principal, request.params.id)
        const { content, totalElements } = await listReplays(deps.db, { workspaceId: request.principal.workspaceId, flowId: request.params.id, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.get(
      '/flows/:id/replays/:replayId',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getFlowReplay',
          summary: 'A replay: its progress and the sessions whose turns the draft would change, with the first differing turn side by side',
          description: 'While `status` is `running`, `checked` grows and differing sessions are added as they are found.',
          params: Type.Object({ id: Uuid, replayId: Uuid }),
          response: { 200: ReplayDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await replayOf(commandContext(deps, request), request.principal, request.params.id, request.params.replayId)
        return {
          id: found.replayId,
          version: found.version,
          draftVersion: found.draftVersion,
          status: found.status,
          total: found.sessionIds.length,
          checked: found.checked,
          differingCount: found.differingCount,
          requestedAt: found.requestedAt,
          finishedAt: found.finishedAt,
          selection: found.selection,
          differing: found.differing,
        }
      },
    )
  }
