import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkDefinition, createFlow, publishFlow, releaseVersion, renameFlow, rollBackFlow, saveDraft, type FlowContext } from '../../commands/flows.js'
import { TestsFailedError } from '../../domain/conversation-test.js'
import { runConversationTests } from '../../engine/conversation-tests.js'
import { FlowVersions } from '../../engine/flow-versions.js'
import { FlowDefinition } from '../../domain/flow-definition.js'
import { FlowName, GradualRelease, StaleDraftError } from '../../domain/flow.js'
import { InvalidFlowError } from '../../domain/validate-flow.js'
import { NotFoundError } from '../../errors.js'
import { FLOW_ORDER_COLUMNS, findFlow, findFlowVersion, listFlowVersions, listFlows, listReleases, type FlowDetail as FlowDetailRow, type FlowOrder } from '../../projections/flows.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { DateRangeParam, Direction, ErrorResponse, MAX_INT32, OneOf, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage, OPTIONAL_BODY } from '../schemas.js'

export const openApiTag: Tag = { name: 'flows', description: 'Flow definitions: draft, validate, publish immutable versions' }

const FlowItem = Type.Object({
  id: Uuid,
  name: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  workspace: Type.Object({ id: Uuid, name: Type.String() }),
})

const Release = Type.Object(
  {
    liveVersion: Type.Integer({ minimum: 1, description: 'the version new sessions start on, but for the share of the one in gradual release' }),
    gradual: Type.Union([GradualRelease, Type.Null()], { description: 'the version in gradual release and the percent of new sessions it takes; null when none is' }),
  },
  { title: 'Release' },
)

const ReleaseChange = Type.Composite(
  [
    Type.Object({
      changedAt: Timestamp,
      reason: Type.Union([Type.Literal('publish'), Type.Literal('rollback'), Type.Literal('release'), Type.Literal('promote'), Type.Literal('halt')], {
        description: 'publish (for all, or a share), rollback, release (a share given or changed), promote (to 100 %), halt (a gradual release ended)',
      }),
      published: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'the version a publish made; null for other changes' }),
    }),
    Release,
  ],
  { title: 'Release change' },
)

const FlowDetail = Type.Composite([
  FlowItem,
  Type.Object({
    draftVersion: Type.Integer({
      minimum: 1,
      description: 'names the draft as it is now and grows whenever it changes (compare it for equality only); the ETag header carries it, and a save may send it back in If-Match',
    }),
    publishedVersion: Type.Integer({ description: 'newest published version' }),
    release: Release,
    definition: FlowDefinition,
  }),
])

const Problem = Type.Object({
  path: Type.String({ description: "where in the definition, e.g. nodes[3].data.saveAs; '' for the whole document", examples: ['edges[0].target'] }),
  message: Type.String({ examples: ['no node "x"'] }),
})

/** The spec's error body; an invalid definition adds the problems one by one (`message` joins them). */
const FlowErrorResponse = Type.Composite([ErrorResponse, Type.Object({ problems: Type.Optional(Type.Array(Problem)) })], { title: 'Flow error' })

const StaleDraftResponse = Type.Composite(
  [
    ErrorResponse,
    Type.Object({
      sentDraftVersion: Type.Integer({ description: 'the draft version the If-Match header named' }),
      currentDraftVersion: Type.Integer({ description: "the draft's version now; load the flow again to see that draft" }),
    }),
  ],
  { title: 'Stale draft' },
)

/** A strong entity tag naming a draft version, or `*` (any draft). */
const IfMatch = Type.String({ pattern: '^(\\*|"[1-9][0-9]{0,8}")$', description: 'the draftVersion the change was based on, as an entity tag, e.g. "4"' })
const draftTag = (draftVersion: number) => `"${draftVersion}"`
const draftVersionIn = (ifMatch: string | undefined): number | undefined => (ifMatch === undefined || ifMatch === '*' ? undefined : Number(ifMatch.slice(1, -1)))

/** Start, a greeting, End: a whole definition, for the examples. */
const GREETING = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'hello', type: 'message', position: { x: 240, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Hello {{customer_name}}!' } }] } },
    { id: 'end', type: 'end', position: { x: 480, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'hello' },
    { id: 'e2', source: 'hello', target: 'end' },
  ],
}

const DefinitionInput = Type.Unknown({ description: 'a flow definition (docs/flow-definition.md); every problem in it is reported at once' })

const VersionItem = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  publishedAt: Timestamp,
  share: Type.Integer({ minimum: 0, maximum: 100, description: 'percent of new sessions that start on this version now: 100 for the live version alone, 0 for one out of release' }),
})

const Published = Type.Object({ version: Type.Integer({ minimum: 1 }), publishedAt: Timestamp, release: Release })

const FailingTestsResponse = Type.Composite(
  [ErrorResponse, Type.Object({ failingTests: Type.Array(Type.Object({ id: Uuid, name: Type.String() }), { description: 'the tests that fail against the draft' }) })],
  { title: 'Failing tests' },
)
const VersionDetail = Type.Composite([VersionItem, Type.Object({ definition: FlowDefinition })])

const FlowParams = Type.Object({ id: Uuid })

const orderColumns = Object.keys(FLOW_ORDER_COLUMNS) as FlowOrder[]

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const flowContext = (request: FastifyRequest): FlowContext => ({ ...commandContext(deps, request), db: deps.db })
    const flowVersions = new FlowVersions(deps.store)
    const detail = async (workspaceId: string, id: string) => {
      const found = await findFlow(deps.db, { workspaceId, id })
      if (!found) throw new NotFoundError(`flow ${id} not found`)
      return found
    }
    const tagged = (reply: FastifyReply, flow: FlowDetailRow) => {
      void reply.header('etag', draftTag(flow.draftVersion))
      return flow
    }

    // Only these routes see this handler; everything else goes on to the app's.
    app.setErrorHandler((error, _request, reply) => {
      if (error instanceof TestsFailedError) {
        return reply.status(409).send({ statusCode: 409, message: error.message, error: 'Conflict', failingTests: error.failingTests.map(({ id, name }) => ({ id, name })) })
      }
      if (error instanceof StaleDraftError) {
        const { message, sentDraftVersion, currentDraftVersion } = error
        return reply.status(412).send({ statusCode: 412, message, error: 'Precondition Failed', sentDraftVersion, currentDraftVersion })
      }
      if (!(error instanceof InvalidFlowError)) throw error
      return reply.status(400).send({ statusCode: 400, message: error.message, error: 'Bad Request', problems: [...error.problems] })
    })

    app.get(
      '/flows',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listFlows',
          summary: "List the flows of the key's organization",
          description: 'A page of flows, filtered by workspace (id or part of its name) and creation date when asked, ordered as asked; a workspace key sees its workspace\'s only.',
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
        const { principal } = request
        // A key lists its organization's flows; the editor only its own workspace's.
        const within = principal.kind === 'editor' ? principal.workspaceId : undefined
        const { content, totalElements } = await listFlows(deps.db, {
          ...request.query,
          workspaceId: request.query.workspaceId ?? within,
          withinWorkspaceId: within,
          organizationId: principal.organizationId,
          now: deps.now(),
        })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/flows',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createFlow',
          summary: "Create a flow in the key's workspace; it is published as version 1 at once",
          description: 'The definition is validated against the workspace (its variables, sectors and pipelines); problems answer 400 with one entry per problem, each with its path in the definition.',
          body: Type.Object({
            name: FlowName,
            definition: Type.Optional(DefinitionInput),
          }, { examples: [{ name: 'Greeting', definition: GREETING }] }),
          response: { 201: FlowDetail, ...errorResponses(401, 413, 415), 400: FlowErrorResponse },
        },
      },
      async (request, reply) => {
        const { flowId } = await createFlow(flowContext(request), request.principal, request.body)
        const created = await findFlow(deps.db, { workspaceId: request.principal.workspaceId, id: flowId })
        if (!created) throw new Error(`flow ${flowId} is not in the read model after its creation`)
        return reply.status(201).header('location', `/v1/flows/${flowId}`).header('etag', draftTag(created.draftVersion)).send(created)
      },
    )

    app.get(
      '/flows/:id',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getFlow',
          summary: 'A flow with its draft definition and published version',
          description: 'The draft definition is what the editor works on; sessions run the published version. The ETag header names the draft version.',
          params: FlowParams,
          response: { 200: FlowDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => tagged(reply, await detail(request.principal.workspaceId, request.params.id)),
    )

    app.patch(
      '/flows/:id',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'updateFlow',
          summary: 'Rename a flow; without a name it answers the flow as it is',
          description: 'Only the name changes here; the definition is saved with PUT /v1/flows/{id}/definition.',
          params: FlowParams,
          body: Type.Object({ name: Type.Optional(FlowName) }, { examples: [{ name: 'Greeting (2026)' }] }),
          response: { 200: FlowDetail, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (request, reply) => {
        await renameFlow(commandContext(deps, request), request.principal, request.params.id, request.body.name)
        return tagged(reply, await detail(request.principal.workspaceId, request.params.id))
      },
    )

    app.put(
      '/flows/:id/definition',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'saveFlowDefinition',
          summary: 'Save the draft definition; published versions are not touched',
          description:
            'The body is the whole definition. It is validated against the workspace (sectors, pipelines, variables); a 400 lists every problem. ' +
            'With If-Match (the draftVersion read, as an entity tag) the draft is saved only if it has not changed since: otherwise 412 names both versions. ' +
            'The answer carries the new draft version in the body and the ETag header.',
          params: FlowParams,
          headers: Type.Object({ 'if-match': Type.Optional(IfMatch) }),
          body: Type.Unknown({ ...DefinitionInput, examples: [GREETING] }),
          response: { 200: FlowDetail, ...errorResponses(401, 404, 413, 415), 400: FlowErrorResponse, 412: StaleDraftResponse },
        },
      },
      async (request, reply) => {
        const { params, principal } = request
        const draft = await saveDraft(flowContext(request), principal, params.id, request.body, draftVersionIn(request.headers['if-match']))
        // The draft this request left, even when a later save already shows in the read model.
        return tagged(reply, { ...(await detail(principal.workspaceId, params.id)), ...draft })
      },
    )

    app.post(
      '/flows/:id/publish',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'publishFlow',
          summary: 'Publish the draft as the next immutable version; new sessions start on it, all or a share of them',
          description:
            'The draft is validated again first. When it equals the newest version, that version is answered and no version is added; if it is not live (after a rollback), it is put out as asked. ' +
            'With `percent` below 100 the version goes out gradually: it takes that share of new sessions and the live version the rest, until it is promoted or rolled back. ' +
            "When the draft's `settings.requirePassingTests` is on, the flow's conversation tests run against the draft first, and 409 names those that fail; the version published is exactly the draft tested.",
          params: FlowParams,
          body: Type.Object(
            { percent: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'share of new sessions the new version takes; the live version keeps the rest' })) },
            { description: OPTIONAL_BODY, examples: [{}, { percent: 20 }] },
          ),
          response: { 200: Published, ...errorResponses(401, 404, 412, 413, 415), 400: FlowErrorResponse, 409: FailingTestsResponse },
        },
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request) => {
        const { principal, params, body } = request
        const flow = await detail(principal.workspaceId, params.id)
        if (!flow.definition.settings?.requirePassingTests) return publishFlow(flowContext(request), principal, params.id, { percent: body.percent })
        const run = await runConversationTests({ ...flowContext(request), flows: flowVersions }, principal, params.id, {})
        if (!run.passed) throw new TestsFailedError(run.tests.filter((test) => !test.passed))
        return publishFlow(flowContext(request), principal, params.id, { percent: body.percent, ifDraftVersion: run.draftVersion ?? undefined })
      },
    )

    app.get(
      '/flows/:id/releases',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listFlowReleases',
          summary: 'The release history of a flow, newest first: every change of the versions its new sessions start on',
          description: 'Each publish, rollback, change of a gradual release\'s share, promotion and end of a gradual release, with the release it left and when.',
          params: FlowParams,
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(ReleaseChange), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { workspaceId } = request.principal
        await detail(workspaceId, request.params.id)
        const { content, totalElements } = await listReleases(deps.db, { workspaceId, flowId: request.params.id, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/flows/:id/rollback',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'rollBackFlow',
          summary: 'Make a published version the one new sessions start on',
          description:
            'At once and for all new sessions; any gradual release ends. Running sessions keep the version they started on. Recorded on the flow like a publish; rolling back to the live version changes nothing.',
          params: FlowParams,
          body: Type.Object({ version: Type.Integer({ minimum: 1, maximum: MAX_INT32 }) }, { examples: [{ version: 1 }] }),
          response: { 200: Release, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (request) => rollBackFlow(flowContext(request), request.principal, request.params.id, request.body.version),
    )

    app.post(
      '/flows/:id/release',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'releaseFlowVersion',
          summary: 'Give a published version a share of new sessions: 100 promotes it, 0 takes it out',
          description:
            'A version other than the live one takes `percent` of new sessions (the one chance decides for each session is recorded as its `flowVersion`), and the live version the rest. ' +
            '100 makes it the live version; 0 ends its gradual release. One version at a time is in gradual release: naming another replaces it. 409 for a share of the live version itself.',
          params: FlowParams,
          body: Type.Object(
            { version: Type.Integer({ minimum: 1, maximum: MAX_INT32 }), percent: Type.Integer({ minimum: 0, maximum: 100 }) },
            { examples: [{ version: 3, percent: 20 }, { version: 3, percent: 100 }] },
          ),
          response: { 200: Release, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => releaseVersion(flowContext(request), request.principal, request.params.id, request.body.version, request.body.percent),
    )

    app.get(
      '/flows/:id/versions',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listFlowVersions',
          summary: 'Published versions of a flow, newest first',
          description: 'A page of the flow\'s published versions, without their definitions.',
          params: FlowParams,
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(VersionItem), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { workspaceId } = request.principal
        await detail(workspaceId, request.params.id)
        const { content, totalElements } = await listFlowVersions(deps.db, { workspaceId, flowId: request.params.id, page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.get(
      '/flows/:id/versions/:version',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getFlowVersion',
          summary: 'One published version with its definition',
          description: 'Versions never change once published; sessions record the version they run.',
          params: Type.Object({ id: Uuid, version: Type.Integer({ minimum: 1, maximum: MAX_INT32 }) }),
          response: { 200: VersionDetail, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { id, version } = request.params
        const found = await findFlowVersion(deps.db, { workspaceId: request.principal.workspaceId, flowId: id, version })
        if (!found) throw new NotFoundError(`flow ${id} has no version ${version}`)
        return found
      },
    )

    app.post(
      '/flows/validate',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'validateFlow',
          summary: "Check a definition against the key's workspace without saving it",
          description: 'Answers 200 with `valid` and the problems found (none when valid); nothing is saved.',
          body: Type.Object({ definition: DefinitionInput }, { examples: [{ definition: GREETING }] }),
          response: { 200: Type.Object({ valid: Type.Boolean(), problems: Type.Array(Problem) }), ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request) => {
        const problems = await checkDefinition(deps, request.principal, request.body.definition)
        return { valid: problems.length === 0, problems }
      },
    )
  }
