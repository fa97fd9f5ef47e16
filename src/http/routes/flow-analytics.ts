import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Value } from '@sinclair/typebox/value'
import type { FlowDefinition } from '../../domain/flow-definition.js'
import * as split from '../../domain/nodes/split.js'
import { BadRequestError, NotFoundError } from '../../errors.js'
import { flowModelUsage } from '../../projections/analytics-model-calls.js'
import { flowVersionAnalytics, flowVersionsCompared } from '../../projections/analytics-sessions.js'
import { sharesOf } from '../../domain/flow.js'
import { dateRangeSince, workspaceTimeZone } from '../../projections/date-range.js'
import { findFlow, findFlowVersion } from '../../projections/flows.js'
import type { AppDeps } from '../app.js'
import { DateRangeParam, MAX_INT32, Timestamp, Uuid, errorResponses } from '../schemas.js'
import { openApiTag } from './flows.js'

export { openApiTag }

const Count = Type.Integer({ minimum: 0 })

const NodeAnalytics = Type.Object({
  nodeId: Type.String(),
  type: Type.String({ description: 'the node type, as in the definition', examples: ['question'] }),
  reached: Type.Integer({ minimum: 0, description: 'sessions that reached the node at least once' }),
  answered: Type.Integer({ minimum: 0, description: 'sessions whose reply the node (a question) accepted' }),
  endedHere: Type.Integer({ minimum: 0, description: 'sessions whose last node reached is this one, however they stand' }),
  waitingHere: Type.Integer({ minimum: 0, description: 'of those, still running (waiting for a reply here)' }),
  droppedOff: Type.Integer({ minimum: 0, description: 'of those, timed out here: the user left' }),
  failedHere: Type.Integer({ minimum: 0, description: 'of those, ended in error here' }),
  completedHere: Type.Integer({ minimum: 0, description: 'of those, completed here (an end or transfer node, or an exit without edge)' }),
})

const BranchAnalytics = Type.Object({
  nodeId: Type.String({ description: 'the split node', examples: ['ab-test'] }),
  branchId: Type.String({ description: 'its branch, an exit of the node', examples: ['short-form'] }),
  sessions: Type.Integer({ minimum: 0, description: 'sessions that drew the branch at least once' }),
  completed: Type.Integer({ minimum: 0, description: 'of those, completed' }),
})

const ModelUsageFigures = {
  calls: Type.Integer({ minimum: 0, description: 'model calls made' }),
  promptTokens: Type.Integer({ minimum: 0, description: 'prompt tokens, as the endpoints counted them' }),
  completionTokens: Type.Integer({ minimum: 0, description: 'completion tokens, as the endpoints counted them' }),
}

const ModelUsage = Type.Object(
  {
    ...ModelUsageFigures,
    days: Type.Array(Type.Object({ date: Type.String({ format: 'date', examples: ['2026-11-22'] }), ...ModelUsageFigures }), {
      description: "per day the calls were made on, in the workspace's time zone (UTC without one): only days with calls, oldest first",
    }),
    models: Type.Array(Type.Object({ model: Type.String({ examples: ['gpt-4o-mini'] }), ...ModelUsageFigures }), {
      description: "per model, as the connection names it: the most tokens first",
    }),
  },
  {
    description:
      "the model calls the AI steps of the version's sessions made in the range (since `since`, when they were made, whenever the session started; every one without dateRange), with their tokens: in all, per day and per model. Preview sessions are not counted",
  },
)

/** Every branch of every split node of a definition, in its order. */
const splitBranches = (definition: FlowDefinition) =>
  definition.nodes.flatMap((node) => (node.type === 'split' && Value.Check(split.schema, node.data) ? node.data.branches.map((branch) => ({ nodeId: node.id, branchId: branch.id })) : []))

const FlowAnalytics = Type.Object(
  {
    flowId: Uuid,
    version: Type.Integer({ minimum: 1 }),
    dateRange: Type.Union([DateRangeParam, Type.Null()]),
    since: Type.Union([Timestamp, Type.Null()], { description: "the first instant counted (sessions started since), in the workspace's time zone; null without dateRange" }),
    sessions: Type.Object({ total: Count, running: Count, completed: Count, timeout: Count, error: Count }, { description: 'sessions of the version started in the range, by status' }),
    days: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date', examples: ['2026-11-22'] }),
        started: Count,
        completed: Count,
      }),
      { description: "sessions of the version started per day, in the workspace's time zone (UTC without one): only days with sessions, oldest first" },
    ),
    nodes: Type.Array(NodeAnalytics, { description: "every node of the version, in the definition's order" }),
    branches: Type.Array(BranchAnalytics, { description: "every branch of every split node of the version, in the definition's order: the A/B test's sessions and completions per branch" }),
    modelUsage: ModelUsage,
  },
  { title: 'Flow analytics' },
)

const SessionsByStatus = Type.Object({ total: Count, running: Count, completed: Count, timeout: Count, error: Count })

const VersionsCompared = Type.Object(
  {
    flowId: Uuid,
    dateRange: Type.Union([DateRangeParam, Type.Null()]),
    since: Type.Union([Timestamp, Type.Null()], { description: "the first instant counted (sessions started since), in the workspace's time zone; null without dateRange" }),
    versions: Type.Array(
      Type.Object({
        version: Type.Integer({ minimum: 1 }),
        share: Type.Integer({ minimum: 0, maximum: 100, description: 'percent of new sessions that start on it now' }),
        sessions: Type.Composite([SessionsByStatus], { description: 'its sessions started in the range, by status: `completed` is completion, `timeout` drop-off' }),
        transferred: Type.Integer({ minimum: 0, description: 'of those, the sessions that asked for a transfer' }),
      }),
      { description: 'every version with sessions in the range or a share of new sessions now, newest first' },
    ),
  },
  { title: 'Flow versions compared' },
)

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/flows/:id/analytics/versions',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'compareFlowVersions',
          summary: "A flow's versions side by side: their sessions, completions, transfers and drop-off, and the share of new sessions each takes",
          description:
            'For a gradual release: each version with sessions started in `dateRange` (every one without it), or with a share of new sessions now, counts its sessions by status and those that transferred, from the analytics read models.',
          params: Type.Object({ id: Uuid }),
          querystring: Type.Object({ dateRange: Type.Optional(DateRangeParam) }),
          response: { 200: VersionsCompared, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { workspaceId } = request.principal
        const flowId = request.params.id
        const flow = await findFlow(deps.db, { workspaceId, id: flowId })
        if (!flow) throw new NotFoundError(`flow ${flowId} not found`)
        const dateRange = request.query.dateRange ?? null
        const since = await dateRangeSince(deps.db, { dateRange: dateRange ?? undefined, now: deps.now(), workspaceId })
        const figures = await flowVersionsCompared(deps.db, { flowId, startedSince: since })
        const shares = sharesOf(flow.release)
        const none = { total: 0, running: 0, completed: 0, timeout: 0, error: 0 }
        const counted = new Set(figures.map((row) => row.version))
        const released = [...shares.keys()].filter((version) => !counted.has(version)).map((version) => ({ version, sessions: none, transferred: 0 }))
        const versions = [...figures, ...released].sort((a, b) => b.version - a.version).map((row) => ({ ...row, share: shares.get(row.version) ?? 0 }))
        return { flowId, dateRange, since: since?.toISOString() ?? null, versions }
      },
    )

    app.get(
      '/flows/:id/analytics',
      {
        // The editor may show it over the canvas: its token reads its own workspace's flows.
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getFlowAnalytics',
          summary: 'Sessions per day of a flow version, per node (the sessions that reached it, answered it and ended there: drop-off), per split branch, and the tokens its AI steps used',
          description:
            'Counts the sessions of one published version (the newest without `version`) started in `dateRange` (every one without it), from the analytics read models (docs/analytics.md). Each branch of a split node counts the sessions that drew it and how many of them completed. `modelUsage` sums the model calls of its AI steps made in the range, per day and per model.',
          params: Type.Object({ id: Uuid }),
          querystring: Type.Object({
            version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT32, description: 'a published version; the newest without it' })),
            dateRange: Type.Optional(DateRangeParam),
          }),
          response: { 200: FlowAnalytics, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { workspaceId } = request.principal
        const flowId = request.params.id
        const flow = await findFlow(deps.db, { workspaceId, id: flowId })
        if (!flow) throw new NotFoundError(`flow ${flowId} not found`)
        const version = request.query.version ?? flow.publishedVersion
        const published = await findFlowVersion(deps.db, { workspaceId, flowId, version })
        if (!published) throw new BadRequestError(`querystring/version: flow ${flowId} has no published version ${version} (the newest is ${flow.publishedVersion})`)
        const dateRange = request.query.dateRange ?? null
        const since = await dateRangeSince(deps.db, { dateRange: dateRange ?? undefined, now: deps.now(), workspaceId })
        const timeZone = await workspaceTimeZone(deps.db, workspaceId)
        const [analytics, modelUsage] = await Promise.all([
          flowVersionAnalytics(deps.db, {
            flowId,
            version,
            startedSince: since,
            timeZone,
            definitionNodes: published.definition.nodes.map(({ id, type }) => ({ id, type })),
            definitionBranches: splitBranches(published.definition),
          }),
          flowModelUsage(deps.db, { flowId, version, since, timeZone }),
        ])
        return { flowId, version, dateRange, since: since?.toISOString() ?? null, ...analytics, modelUsage }
      },
    )
  }
