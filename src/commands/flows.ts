import { startToEnd, type FlowDefinition } from '../domain/flow-definition.js'
import { flow, flowStream, type FlowCommand, type Release } from '../domain/flow.js'
import { validateFlow, type Problem, type WorkspaceCatalog } from '../domain/validate-flow.js'
import { sql } from 'kysely'
import { newId } from '../ids.js'
import { aiConnections, aiConnectionsStream } from '../domain/ai-connection.js'
import type { EventStore } from '../eventstore/port.js'
import { foldStream } from '../eventstore/stream-state.js'
import { allVariables } from '../projections/variables.js'
import type { DbOrTrx } from '../store/database.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'
import type { Scope } from './sectors.js'

/** Flow commands validate definitions against what the workspace's read models hold. */
export interface FlowContext extends CommandContext {
  db: DbOrTrx
}

/**
 * The sectors, pipelines with their stages and fields, variables and flows a flow of the workspace
 * may refer to; `flowId`, the flow checked (once it exists), for its runFlow nodes' cycle check.
 */
export async function loadWorkspaceCatalog({ db, store }: CatalogSource, workspaceId: string, flowId?: string): Promise<WorkspaceCatalog> {
  const [sectors, pipelines, variables, flows, connections] = await Promise.all([
    db.selectFrom('sectors').select('id').where('workspace_id', '=', workspaceId).execute(),
    db.selectFrom('kanban_pipelines').select(['id', 'stages', 'fields']).where('workspace_id', '=', workspaceId).execute(),
    allVariables(db, workspaceId),
    flowsRun(db, workspaceId),
    foldStream(store, aiConnections, aiConnectionsStream(workspaceId)),
  ])
  return {
    sectorIds: new Set(sectors.map((s) => s.id)),
    pipelines: new Map(pipelines.map((p) => [p.id, { stageIds: new Set(p.stages.map((stage) => stage.id)), fields: p.fields }])),
    variables: new Map(variables.map((v) => [v.name, v.type])),
    flows: new Map(flows.map((f) => [f.id, { name: f.name, publishedVersion: Number(f.published_version), runs: f.runs }])),
    aiConnections: new Set(Object.keys(connections.state.byId)),
    ...(flowId !== undefined && { flowId }),
  }
}

/** Where a workspace's catalog is read: its read models, and the event store for its AI connections. */
export interface CatalogSource {
  db: DbOrTrx
  store: EventStore
}

/** The workspace's flows, each with the flows its live version runs (its runFlow nodes' `flowId`): what a `published` sub-flow runs. */
const flowsRun = (db: DbOrTrx, workspaceId: string) =>
  db
    .selectFrom('flows')
    .leftJoin('flow_versions', (join) => join.onRef('flow_versions.flow_id', '=', 'flows.id').onRef('flow_versions.version', '=', 'flows.live_version'))
    .select([
      'flows.id',
      'flows.name',
      'flows.published_version',
      sql<string[]>`coalesce(jsonb_path_query_array(flow_versions.definition, '$.nodes[*] ? (@.type == "runFlow").data.flowId'), '[]'::jsonb)`.as('runs'),
    ])
    .where('flows.workspace_id', '=', workspaceId)
    .execute()

/** Every problem of a definition in the caller's workspace; none when it is valid. */
export async function checkDefinition(source: CatalogSource, scope: Scope, definition: unknown, flowId?: string): Promise<Problem[]> {
  return validateFlow(definition, await loadWorkspaceCatalog(source, scope.workspaceId, flowId))
}

export async function createFlow(ctx: FlowContext, scope: Scope, input: { name: string; definition?: unknown }): Promise<{ flowId: string }> {
  const flowId = newId()
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), {
    type: 'CreateFlow',
    data: {
      flowId,
      workspaceId: scope.workspaceId,
      organizationId: scope.organizationId,
      name: input.name,
      definition: input.definition ?? startToEnd(),
      catalog: await loadWorkspaceCatalog(ctx, scope.workspaceId),
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return { flowId }
}

/**
 * Replaces the draft after validating it; an identical draft appends nothing. With `ifDraftVersion`
 * the draft is replaced only while it is still at that version (StaleDraftError otherwise): the
 * decider checks it on the stream, so a concurrent save cannot slip in between.
 */
export async function saveDraft(
  ctx: FlowContext,
  scope: Scope,
  flowId: string,
  definition: unknown,
  ifDraftVersion?: number,
): Promise<{ draftVersion: number; definition: FlowDefinition }> {
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), {
    type: 'SaveDraft',
    data: {
      flowId,
      workspaceId: scope.workspaceId,
      definition,
      catalog: await loadWorkspaceCatalog(ctx, scope.workspaceId, flowId),
      now: ctx.now().toISOString(),
      ...(ifDraftVersion !== undefined && { ifDraftVersion }),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  if (result.state.status !== 'active') throw new Error(`flow ${flowId} has no draft after saving it`)
  return { draftVersion: result.state.draftVersion, definition: result.state.draft }
}

export async function renameFlow(ctx: CommandContext, scope: Scope, flowId: string, name: string | undefined): Promise<void> {
  if (name === undefined) return
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), {
    type: 'RenameFlow',
    data: { flowId, workspaceId: scope.workspaceId, name, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}

export interface Published {
  version: number
  publishedAt: string
  release: Release
}

/**
 * Freezes the draft as the next version, live for all new sessions or, with `percent`, for that
 * share of them; answers the newest version when the draft is exactly that. With `ifDraftVersion`,
 * only that version of the draft is published (StaleDraftError otherwise).
 */
export async function publishFlow(ctx: FlowContext, scope: Scope, flowId: string, options: { percent?: number; ifDraftVersion?: number } = {}): Promise<Published> {
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), {
    type: 'PublishFlow',
    data: { flowId, workspaceId: scope.workspaceId, catalog: await loadWorkspaceCatalog(ctx, scope.workspaceId, flowId), now: ctx.now().toISOString(), ...options },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  if (result.state.status !== 'active' || !result.state.latest) throw new Error(`flow ${flowId} has no published version after publishing`)
  return { version: result.state.latest.version, publishedAt: result.state.latest.publishedAt, release: result.state.release }
}

/** Makes `version` the one new sessions start on, at once and for all. */
export async function rollBackFlow(ctx: CommandContext, scope: Scope, flowId: string, version: number): Promise<Release> {
  return changeRelease(ctx, flowId, { type: 'RollBackFlow', data: { flowId, workspaceId: scope.workspaceId, version, now: ctx.now().toISOString() } })
}

/** Gives `version` `percent` of new sessions: 100 promotes it, 0 takes it out of release. */
export async function releaseVersion(ctx: CommandContext, scope: Scope, flowId: string, version: number, percent: number): Promise<Release> {
  return changeRelease(ctx, flowId, { type: 'ReleaseVersion', data: { flowId, workspaceId: scope.workspaceId, version, percent, now: ctx.now().toISOString() } })
}

async function changeRelease(ctx: CommandContext, flowId: string, command: FlowCommand): Promise<Release> {
  const result = await handleCommand(ctx.store, flow, flowStream(flowId), command, ctx.metadata)
  await awaitReadModels(ctx, result)
  if (result.state.status !== 'active') throw new Error(`flow ${flowId} is gone after a change of its release`)
  return result.state.release
}
