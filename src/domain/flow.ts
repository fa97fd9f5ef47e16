import { Type, type Static } from '@sinclair/typebox'
import { assertValidFlow, type WorkspaceCatalog } from './validate-flow.js'
import { ConflictError, NotFoundError, PreconditionFailedError } from '../errors.js'
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

export type FlowEvent =
  | { type: 'FlowCreated'; data: Static<typeof FlowCreated> }
  | { type: 'FlowPublished'; data: Static<typeof FlowPublished> }
  | { type: 'FlowDraftSaved'; data: Static<typeof FlowDraftSaved> }
  | { type: 'FlowRenamed'; data: Static<typeof FlowRenamed> }

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
  | { type: 'PublishFlow'; data: { flowId: string; workspaceId: string; catalog: WorkspaceCatalog; now: string } }

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

export const flow: Decider<FlowCommand, Flow, FlowEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { FlowCreated, FlowPublished, FlowDraftSaved, FlowRenamed },

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
        const { flowId, workspaceId, catalog, now } = command.data
        const current = reachable(state, flowId, workspaceId)
        // The workspace may have lost a sector, pipeline or variable since the draft was saved.
        assertValidFlow(current.draft, catalog)
        // Publishing what is already the newest version adds nothing (and keeps retries harmless).
        if (current.latest && sameJson(current.draft, current.latest.definition)) return []
        return [{ type: 'FlowPublished', data: { flowId, version: current.publishedVersion + 1, definition: current.draft, publishedAt: now } }]
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
      }
    }
    if (state.status === 'none') return state
    const revision = state.revision + 1
    switch (event.type) {
      case 'FlowPublished': {
        const { version, publishedAt, definition } = event.data
        return { ...state, revision, publishedVersion: version, latest: { version, publishedAt, definition } }
      }
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
