import { sql } from 'kysely'
import type { FlowDefinition } from '../domain/flow-definition.js'
import { draftVersionOf, sharesOf, type FlowEvent, type Release, type ReleaseReason } from '../domain/flow.js'
import type { ReplayEvent } from '../domain/replay.js'
import { applyReplayEvent } from './replays.js'
import type { DbOrTrx } from '../store/database.js'
import { dateRangeSince, type DateRange } from './date-range.js'
import { listPage, sqlDirection, type ListPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'
import { toIso } from './timestamps.js'

export const flowsProjection = defineProjection<FlowEvent | ReplayEvent>({
  name: 'flows',
  streamPrefixes: ['flow-', 'replay-'],
  tables: ['flows', 'flow_versions', 'flow_replays', 'flow_releases'],
  async apply(trx, event, recorded) {
    switch (event.type) {
      case 'ReplayRequested':
      case 'ReplayProgressed':
      case 'ReplayFinished':
        await applyReplayEvent(trx, event)
        break
      case 'FlowCreated':
        await trx
          .insertInto('flows')
          .values({
            id: event.data.flowId,
            workspace_id: event.data.workspaceId,
            organization_id: event.data.organizationId,
            name: event.data.name,
            draft: sql<string>`cast(${JSON.stringify(event.data.definition)} as jsonb)`,
            draft_version: draftVersionOf(Number(recorded.revision)),
            published_version: 0,
            live_version: 0,
            created_at: event.data.createdAt,
            updated_at: event.data.createdAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      case 'FlowPublished':
        await trx
          .insertInto('flow_versions')
          .values({
            flow_id: event.data.flowId,
            version: event.data.version,
            definition: sql<string>`cast(${JSON.stringify(event.data.definition)} as jsonb)`,
            published_at: event.data.publishedAt,
          })
          .onConflict((oc) => oc.columns(['flow_id', 'version']).doNothing())
          .execute()
        await trx
          .updateTable('flows')
          .set({ published_version: event.data.version, live_version: event.data.version, gradual_version: null, gradual_percent: null, updated_at: event.data.publishedAt })
          .where('id', '=', event.data.flowId)
          .where('published_version', '<', event.data.version)
          .execute()
        await recordRelease(trx, event.data.flowId, recorded.revision, { reason: 'publish', liveVersion: event.data.version, gradual: null, published: event.data.version }, event.data.publishedAt)
        break
      case 'FlowDraftSaved': {
        const draftVersion = draftVersionOf(Number(recorded.revision))
        await trx
          .updateTable('flows')
          .set({ draft: sql<string>`cast(${JSON.stringify(event.data.definition)} as jsonb)`, draft_version: draftVersion, updated_at: event.data.savedAt })
          .where('id', '=', event.data.flowId)
          .where('draft_version', '<', draftVersion)
          .execute()
        break
      }
      case 'FlowReleaseChanged':
        await recordRelease(trx, event.data.flowId, recorded.revision, event.data, event.data.changedAt)
        await trx
          .updateTable('flows')
          .set({
            live_version: event.data.liveVersion,
            gradual_version: event.data.gradual?.version ?? null,
            gradual_percent: event.data.gradual?.percent ?? null,
            updated_at: event.data.changedAt,
          })
          .where('id', '=', event.data.flowId)
          .execute()
        break
      case 'FlowRenamed':
        await trx.updateTable('flows').set({ name: event.data.name, updated_at: event.data.renamedAt }).where('id', '=', event.data.flowId).execute()
        break
    }
  },
})

/** A row of the release history; one per flow event, so a redelivered event adds none. */
const recordRelease = (trx: DbOrTrx, flowId: string, revision: bigint, change: Release & { reason: ReleaseReason; published?: number }, at: string) =>
  trx
    .insertInto('flow_releases')
    .values({
      flow_id: flowId,
      revision: revision.toString(),
      reason: change.reason,
      published_version: change.published ?? null,
      live_version: change.liveVersion,
      gradual_version: change.gradual?.version ?? null,
      gradual_percent: change.gradual?.percent ?? null,
      changed_at: at,
    })
    .onConflict((oc) => oc.columns(['flow_id', 'revision']).doNothing())
    .execute()

export const FLOW_ORDER_COLUMNS = { name: 'flows.name', createdAt: 'flows.created_at', updatedAt: 'flows.updated_at' } as const
export type FlowOrder = keyof typeof FLOW_ORDER_COLUMNS

export interface FlowListQuery extends Paging {
  organizationId: string
  orderBy?: FlowOrder
  direction: 'ASC' | 'DESC'
  workspaceId?: string
  /** The caller reaches this workspace only (the editor's token); `workspaceId` then narrows nothing further or matches nothing. */
  withinWorkspaceId?: string
  /** Case-insensitive part of the workspace's name. */
  workspaceName?: string
  dateRange?: DateRange
  now: Date
}

export interface FlowListItem {
  id: string
  name: string
  createdAt: string
  updatedAt: string
  workspace: { id: string; name: string }
}

export interface FlowDetail extends FlowListItem {
  /** Changes whenever the draft does (see the flow decider); a save may name it in If-Match. */
  draftVersion: number
  publishedVersion: number
  release: Release
  definition: FlowDefinition
}

const releaseOf = (row: { live_version: number; gradual_version: number | null; gradual_percent: number | null }): Release => ({
  liveVersion: row.live_version,
  gradual: row.gradual_version !== null && row.gradual_percent !== null ? { version: row.gradual_version, percent: row.gradual_percent } : null,
})

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Flows of an organization with the list endpoint's filters; `dateRange` counts days in the filtered workspace's zone, else UTC. */
export async function listFlows(db: DbOrTrx, query: FlowListQuery): Promise<ListPage<FlowListItem>> {
  const createdSince = await dateRangeSince(db, query)
  let matching = db
    .selectFrom('flows')
    .innerJoin('workspaces', 'workspaces.id', 'flows.workspace_id')
    .where('flows.organization_id', '=', query.organizationId)
  if (query.workspaceId) matching = matching.where('flows.workspace_id', '=', query.workspaceId)
  if (query.withinWorkspaceId) matching = matching.where('flows.workspace_id', '=', query.withinWorkspaceId)
  if (query.workspaceName) matching = matching.where((eb) => eb(eb.fn('lower', ['workspaces.name']), 'like', `%${escapeLike(query.workspaceName!.toLowerCase())}%`))
  if (createdSince) matching = matching.where('flows.created_at', '>=', createdSince)

  const direction = sqlDirection(query.direction)
  const ordered = matching
    .select(['flows.id', 'flows.name', 'flows.created_at', 'flows.updated_at', 'workspaces.id as workspace_id', 'workspaces.name as workspace_name'])
    .orderBy(FLOW_ORDER_COLUMNS[query.orderBy ?? 'createdAt'], direction)
    .orderBy('flows.id', direction)
  return listPage({ matching, ordered }, query, (row) => ({
    id: row.id,
    name: row.name,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
    workspace: { id: row.workspace_id, name: row.workspace_name },
  }))
}

export async function findFlow(db: DbOrTrx, query: { workspaceId: string; id: string }): Promise<FlowDetail | undefined> {
  const row = await db
    .selectFrom('flows')
    .innerJoin('workspaces', 'workspaces.id', 'flows.workspace_id')
    .select(['flows.id', 'flows.name', 'flows.created_at', 'flows.updated_at', 'flows.draft', 'flows.draft_version', 'flows.published_version', 'flows.live_version', 'flows.gradual_version', 'flows.gradual_percent', 'workspaces.name as workspace_name', 'workspaces.id as workspace_id'])
    .where('flows.id', '=', query.id)
    .where('flows.workspace_id', '=', query.workspaceId)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    id: row.id,
    name: row.name,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
    workspace: { id: row.workspace_id, name: row.workspace_name },
    draftVersion: row.draft_version,
    publishedVersion: row.published_version,
    release: releaseOf(row),
    definition: row.draft as FlowDefinition,
  }
}

export interface FlowVersionItem {
  version: number
  publishedAt: string
  /** Percent of new sessions the version starts on now: 100 for the live one alone, 0 for one out of release. */
  share: number
}

export interface FlowVersionDetail extends FlowVersionItem {
  definition: FlowDefinition
}

const versionsOf = (db: DbOrTrx, query: { workspaceId: string; flowId: string }) =>
  db
    .selectFrom('flow_versions')
    .innerJoin('flows', 'flows.id', 'flow_versions.flow_id')
    .where('flows.workspace_id', '=', query.workspaceId)
    .where('flow_versions.flow_id', '=', query.flowId)

const RELEASE_COLUMNS = ['flows.live_version', 'flows.gradual_version', 'flows.gradual_percent'] as const
const shareOf = (row: { version: number; live_version: number; gradual_version: number | null; gradual_percent: number | null }) =>
  sharesOf(releaseOf(row)).get(row.version) ?? 0

/** Published versions of a flow of the workspace, newest first. */
export async function listFlowVersions(db: DbOrTrx, query: Paging & { workspaceId: string; flowId: string }): Promise<ListPage<FlowVersionItem>> {
  const matching = versionsOf(db, query)
  const ordered = matching.select(['flow_versions.version', 'flow_versions.published_at', ...RELEASE_COLUMNS]).orderBy('flow_versions.version', 'desc')
  return listPage({ matching, ordered }, query, (row) => ({ version: row.version, publishedAt: toIso(row.published_at), share: shareOf(row) }))
}

export async function findFlowVersion(db: DbOrTrx, query: { workspaceId: string; flowId: string; version: number }): Promise<FlowVersionDetail | undefined> {
  const row = await versionsOf(db, query)
    .select(['flow_versions.version', 'flow_versions.published_at', 'flow_versions.definition', ...RELEASE_COLUMNS])
    .where('flow_versions.version', '=', query.version)
    .executeTakeFirst()
  return row && { version: row.version, publishedAt: toIso(row.published_at), share: shareOf(row), definition: row.definition as FlowDefinition }
}

export interface ReleaseChange extends Release {
  changedAt: string
  reason: ReleaseReason
  /** The version a publish made; null for other changes. */
  published: number | null
}

/**
 * A flow's release history, newest first: every change of the versions its new sessions start on.
 * A gradual publish is one change (its version published, then given its share in the same append).
 */
export async function listReleases(db: DbOrTrx, query: Paging & { workspaceId: string; flowId: string }): Promise<ListPage<ReleaseChange>> {
  const matching = db
    .selectFrom('flow_releases as r')
    .innerJoin('flows', 'flows.id', 'r.flow_id')
    .where('flows.workspace_id', '=', query.workspaceId)
    .where('r.flow_id', '=', query.flowId)
    // The publish whose share the next row of the same append sets.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('flow_releases as next')
            .select('next.revision')
            .whereRef('next.flow_id', '=', 'r.flow_id')
            .where('r.published_version', 'is not', null)
            .where('next.published_version', 'is', null)
            .where('next.reason', '=', 'publish')
            .where(sql<boolean>`next.revision = r.revision + 1`),
        ),
      ),
    )
  const ordered = matching
    .leftJoin('flow_releases as published', (join) =>
      join
        .onRef('published.flow_id', '=', 'r.flow_id')
        .on(sql<boolean>`published.revision = r.revision - 1`)
        .on('published.published_version', 'is not', null)
        .on('r.published_version', 'is', null)
        .on('r.reason', '=', 'publish'),
    )
    .select(['r.changed_at', 'r.reason', 'r.live_version', 'r.gradual_version', 'r.gradual_percent', 'r.published_version', 'published.published_version as gradually_published'])
    .orderBy('r.revision', 'desc')
  return listPage({ matching, ordered }, query, (row) => ({
    changedAt: toIso(row.changed_at),
    reason: row.reason,
    published: row.published_version ?? row.gradually_published ?? null,
    ...releaseOf(row),
  }))
}
