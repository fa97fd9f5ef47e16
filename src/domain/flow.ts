import { Type, type Static } from '@sinclair/typebox'
import { assertValidFlow, type WorkspaceCatalog } from './validate-flow.js'
import { BadRequestError, ConflictError, NotFoundError, PreconditionFailedError } from '../errors.js'
import type { Decider } from './decider.js'
import { FlowDefinition } from './flow-definition.js'
import { sameJson } from './json.js'
import { Timestamp, Uuid } from './schemas.js'

export const flowStream = (flowId: string) => `flow-${flowId}`

export const FlowName = Type.String({ minLength: 1, maxLength: 200 })

const FlowCreated = Type.Object({
  flowId: Uuid,
  workspaceId: Uuid,
  organizationId: Uuid,
  name: Type.String({ minLength: 1 }),
  /** The first draft. */
  definition: FlowDefinition,
  createdAt: Timestamp,
})

/** An immutable version that sessions can run. */
const FlowPublished = Type.Object({ flowId: Uuid, version: Type.Integer({ minimum: 1 }), definition: FlowDefinition, publishedAt: Timestamp })

/** The draft replaced; published versions stay as they are. */
const FlowDraftSaved = Type.Object({ flowId: Uuid, definition: FlowDefinition, savedAt: Timestamp })

const FlowRenamed = Type.Object({ flowId: Uuid, name: Type.String({ minLength: 1 }), renamedAt: Timestamp })

/** Percent of new sessions a version in gradual release takes. */
export const ReleasePercent = Type.Integer({ minimum: 1, maximum: 99 })

export const GradualRelease = Type.Object({ version: Type.Integer({ minimum: 1 }), percent: ReleasePercent })
export type GradualRelease = Static<typeof GradualRelease>

/**
 * Which versions new sessions start on changed: `liveVersion` takes them all but the share of the
 * version in gradual release (`gradual`), when there is one. A publish makes its version live at
 * once; this event follows it in the same append when it goes out gradually, and stands alone for a
 * rollback, a change of the share, a promotion or the end of a gradual release.
 */
const FlowReleaseChanged = Type.Object({
  flowId: Uuid,
  liveVersion: Type.Integer({ minimum: 1 }),
  gradual: Type.Union([GradualRelease, Type.Null()]),
  reason: Type.Union([Type.Literal('publish'), Type.Literal('rollback'), Type.Literal('release'), Type.Literal('promote'), Type.Literal('halt')]),
  changedAt: Timestamp,
})
export type ReleaseReason = Static<typeof FlowReleaseChanged>['reason']

export type FlowEvent =
  | { type: 'FlowCreated'; data: Static<typeof FlowCreated> }
  | { type: 'FlowPublished'; data: Static<typeof FlowPublished> }
  | { type: 'FlowDraftSaved'; data: Static<typeof FlowDraftSaved> }
  | { type: 'FlowRenamed'; data: Static<typeof FlowRenamed> }
  | { type: 'FlowReleaseChanged'; data: Static<typeof FlowReleaseChanged> }

/**
 * `catalog` is what the flow's workspace holds (sectors, pipelines, variables) as the read models
 * know it: a definition is validated against it before it is saved or published. `workspaceId` is
 * the caller's: a flow of another workspace is answered as not found.
 */
export type FlowCommand =
  | {
      type: 'CreateFlow'
      data: { flowId: string; workspaceId: string; organizationId: string; name: string; definition: unknown; catalog: WorkspaceCatalog; now: string }
    }
  /** `ifDraftVersion`: save only over this version of the draft (the client's If-Match); absent, over any. */
  | {
      type: 'SaveDraft'
      data: { flowId: string; workspaceId: string; definition: unknown; catalog: WorkspaceCatalog; now: string; ifDraftVersion?: number }
    }
  | { type: 'RenameFlow'; data: { flowId: string; workspaceId: string; name: string; now: string } }
  /**
   * `percent`: the new version takes this share of new sessions (gradual release), the live one the
   * rest; absent, it goes live for all. `ifDraftVersion`: publish only this version of the draft.
   */
  | { type: 'PublishFlow'; data: { flowId: string; workspaceId: string; catalog: WorkspaceCatalog; now: string; percent?: number; ifDraftVersion?: number } }
  /** Makes a published version the live one at once, ending any gradual release. */
  | { type: 'RollBackFlow'; data: { flowId: string; workspaceId: string; version: number; now: string } }
  /** Gives a published version `percent` of new sessions: 100 promotes it to live, 0 ends its gradual release. */
  | { type: 'ReleaseVersion'; data: { flowId: string; workspaceId: string; version: number; percent: number; now: string } }

/** The versions new sessions start on: the live one, and a share for one in gradual release. */
export interface Release {
  liveVersion: number
  gradual: GradualRelease | null
}

/**
 * The version a new session starts on: the one in gradual release when `draw` (uniform in [0, 1),
 * made once and recorded as the session's version) falls in its share, else the live one.
 */
export const versionForNewSession = (release: Release, draw: number): number =>
  release.gradual && draw * 100 < release.gradual.percent ? release.gradual.version : release.liveVersion

/** The share of new sessions each version of `release` takes, in percent. */
export function sharesOf(release: Release): Map<number, number> {
  const shares = new Map([[release.liveVersion, 100]])
  if (release.gradual) {
    shares.set(release.liveVersion, 100 - release.gradual.percent)
    shares.set(release.gradual.version, release.gradual.percent)
  }
  return shares
}

export interface PublishedVersion {
  version: number
  publishedAt: string
  definition: FlowDefinition
}

/**
 * `draftVersion` names the draft as it is now: one more than the stream revision of the event that
 * wrote it, so it grows whenever the draft changes and a read model derives it from that event
 * alone. `revision` is the stream's revision after the events folded so far.
 */
export type Flow =
  | { status: 'none' }
  | {
      status: 'active'
      flowId: string
      workspaceId: string
      name: string
      draft: FlowDefinition
      draftVersion: number
      revision: number
      publishedVersion: number
      latest: PublishedVersion | null
      release: Release
    }

/** The draft changed since the version the client sent (412). */
export class StaleDraftError extends PreconditionFailedError {
  readonly sentDraftVersion: number
  readonly currentDraftVersion: number

  constructor(
    flowId: string,
    sentDraftVersion: number,
    currentDraftVersion: number,
  ) {
    super(`flow ${flowId}: the draft is at version ${currentDraftVersion}, not at version ${sentDraftVersion} that was sent; another change was saved meanwhile`)
    this.sentDraftVersion = sentDraftVersion
    this.currentDraftVersion = currentDraftVersion
  }
}

export const draftVersionOf = (revision: number) => revision + 1

type ActiveFlow = Extract<Flow, { status: 'active' }>

const reachable = (state: Flow, flowId: string, workspaceId: string): ActiveFlow => {
  if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`flow ${flowId} not found`)
  return state
}

const publishedOf = (state: ActiveFlow, version: number): number => {
  if (!Number.isInteger(version) || version < 1 || version > state.publishedVersion) {
    throw new BadRequestError(`version: flow ${state.flowId} has published versions 1 to ${state.publishedVersion}`)
  }
  return version
}

const releaseChanged = (state: ActiveFlow, release: Release, reason: ReleaseReason, now: string): FlowEvent[] =>
  sameJson(release, state.release) ? [] : [{ type: 'FlowReleaseChanged', data: { flowId: state.flowId, ...release, reason, changedAt: now } }]

/** The release after `version` gets `percent` of new sessions. */
function releasing(state: ActiveFlow, version: number, percent: number): { release: Release; reason: ReleaseReason } {
  const { liveVersion, gradual } = state.release
  if (percent === 100) return { release: { liveVersion: version, gradual: null }, reason: 'promote' }
  if (percent === 0) {
    if (version === liveVersion) throw new ConflictError(`version ${version} is live; roll back to another version to take it out`)
    return { release: { liveVersion, gradual: gradual?.version === version ? null : gradual }, reason: 'halt' }
  }
  if (version === liveVersion) throw new ConflictError(`version ${version} is live: it takes what the version in gradual release does not; promote or roll back instead`)
  return { release: { liveVersion, gradual: { version, percent } }, reason: 'release' }
}

export const flow: Decider<FlowCommand, Flow, FlowEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { FlowCreated, FlowPublished, FlowDraftSaved, FlowRenamed, FlowReleaseChanged },

  decide(command, state) {
    switch (command.type) {
      case 'CreateFlow': {
        if (state.status !== 'none') throw new ConflictError(`flow ${command.data.flowId} already exists`)
        const { now, catalog, definition, ...rest } = command.data
        assertValidFlow(definition, catalog)
        // A new flow can run at once: its first draft is published as version 1.
        return [
          { type: 'FlowCreated', data: { ...rest, definition, createdAt: now } },
          { type: 'FlowPublished', data: { flowId: rest.flowId, version: 1, definition, publishedAt: now } },
        ]
      }
      case 'SaveDraft': {
        const { flowId, workspaceId, definition, catalog, now } = command.data
        const current = reachable(state, flowId, workspaceId)
        const { ifDraftVersion } = command.data
        if (ifDraftVersion !== undefined && ifDraftVersion !== current.draftVersion) throw new StaleDraftError(flowId, ifDraftVersion, current.draftVersion)
        assertValidFlow(definition, catalog)
        if (sameJson(definition, current.draft)) return []
        return [{ type: 'FlowDraftSaved', data: { flowId, definition, savedAt: now } }]
      }
      case 'RenameFlow': {
        const { flowId, workspaceId, name, now } = command.data
        const current = reachable(state, flowId, workspaceId)
        if (name === current.name) return []
        return [{ type: 'FlowRenamed', data: { flowId, name, renamedAt: now } }]
      }
      case 'PublishFlow': {
        const { flowId, workspaceId, catalog, now, percent, ifDraftVersion } = command.data
        const current = reachable(state, flowId, workspaceId)
        if (ifDraftVersion !== undefined && ifDraftVersion !== current.draftVersion) throw new StaleDraftError(flowId, ifDraftVersion, current.draftVersion)
        // The workspace may have lost a sector, pipeline or variable since the draft was saved.
        assertValidFlow(current.draft, catalog)
        // Publishing what is already the newest version adds no version (and keeps retries harmless);
        // after a rollback or during its gradual release, it puts that version out as asked.
        if (current.latest && sameJson(current.draft, current.latest.definition)) {
          const { version } = current.latest
          const { liveVersion } = current.release
          if (percent === undefined || percent >= 100) return releaseChanged(current, { liveVersion: version, gradual: null }, 'publish', now)
          // A share of the live version is no change: it takes what any gradual release leaves.
          if (version === liveVersion) return []
          return releaseChanged(current, { liveVersion, gradual: { version, percent } }, 'publish', now)
        }
        const version = current.publishedVersion + 1
        const published: FlowEvent = { type: 'FlowPublished', data: { flowId, version, definition: current.draft, publishedAt: now } }
        if (percent === undefined || percent >= 100) return [published]
        // Gradual: the live version keeps the rest of the new sessions (and any earlier gradual release ends).
        const gradual: FlowEvent = {
          type: 'FlowReleaseChanged',
          data: { flowId, liveVersion: current.release.liveVersion, gradual: { version, percent }, reason: 'publish', changedAt: now },
        }
        return [published, gradual]
      }
      case 'RollBackFlow': {
        const { flowId, workspaceId, version, now } = command.data
        const current = reachable(state, flowId, workspaceId)
        return releaseChanged(current, { liveVersion: publishedOf(current, version), gradual: null }, 'rollback', now)
      }
      case 'ReleaseVersion': {
        const { flowId, workspaceId, version, percent, now } = command.data
        const current = reachable(state, flowId, workspaceId)
        const { release, reason } = releasing(current, publishedOf(current, version), percent)
        return releaseChanged(current, release, reason, now)
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    if (event.type === 'FlowCreated') {
      return {
        status: 'active',
        flowId: event.data.flowId,
        workspaceId: event.data.workspaceId,
        name: event.data.name,
        draft: event.data.definition,
        draftVersion: draftVersionOf(0),
        revision: 0,
        publishedVersion: 0,
        latest: null,
        release: { liveVersion: 0, gradual: null },
      }
    }
    if (state.status === 'none') return state
    const revision = state.revision + 1
    switch (event.type) {
      case 'FlowPublished': {
        const { version, publishedAt, definition } = event.data
        return { ...state, revision, publishedVersion: version, latest: { version, publishedAt, definition }, release: { liveVersion: version, gradual: null } }
      }
      case 'FlowReleaseChanged':
        return { ...state, revision, release: { liveVersion: event.data.liveVersion, gradual: event.data.gradual } }
      case 'FlowDraftSaved':
        return { ...state, revision, draft: event.data.definition, draftVersion: draftVersionOf(revision) }
      case 'FlowRenamed':
        return { ...state, revision, name: event.data.name }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
