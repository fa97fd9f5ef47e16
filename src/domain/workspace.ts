import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const workspaceStream = (workspaceId: string) => `workspace-${workspaceId}`

const WorkspaceCreated = Type.Object({
  workspaceId: Uuid,
  organizationId: Uuid,
  name: Type.String({ minLength: 1 }),
  timezone: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
})
/** Only what changed is present; a null time zone is back to UTC. */
const WorkspaceChanged = Type.Object({
  workspaceId: Uuid,
  name: Type.Optional(Type.String({ minLength: 1 })),
  timezone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  changedAt: Timestamp,
})

export type WorkspaceEvent =
  | { type: 'WorkspaceCreated'; data: Static<typeof WorkspaceCreated> }
  | { type: 'WorkspaceChanged'; data: Static<typeof WorkspaceChanged> }

/** `organizationId` is the caller's: a workspace of another organization is answered as not found. */
export type WorkspaceCommand =
  | { type: 'CreateWorkspace'; data: { workspaceId: string; organizationId: string; name: string; timezone: string | null; now: string } }
  | { type: 'ChangeWorkspace'; data: { workspaceId: string; organizationId: string; name?: string; timezone?: string | null; now: string } }

export type Workspace = { status: 'none' } | { status: 'active'; workspaceId: string; organizationId: string; name: string; timezone: string | null }

export const workspace: Decider<WorkspaceCommand, Workspace, WorkspaceEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { WorkspaceCreated, WorkspaceChanged },

  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkspace': {
        if (state.status !== 'none') throw new ConflictError(`workspace ${command.data.workspaceId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'WorkspaceCreated', data: { ...rest, createdAt: now } }]
      }
      case 'ChangeWorkspace': {
        const { workspaceId, organizationId, name, timezone, now } = command.data
        if (state.status !== 'active' || state.organizationId !== organizationId) throw new NotFoundError(`workspace ${workspaceId} not found`)
        const changes = {
          ...(name !== undefined && name !== state.name ? { name } : {}),
          ...(timezone !== undefined && timezone !== state.timezone ? { timezone } : {}),
        }
        if (Object.keys(changes).length === 0) return []
        return [{ type: 'WorkspaceChanged', data: { workspaceId, ...changes, changedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated': {
        const { createdAt: _createdAt, ...rest } = event.data
        return { status: 'active', ...rest }
      }
      case 'WorkspaceChanged': {
        if (state.status !== 'active') return state
        const { name = state.name, timezone = state.timezone } = event.data
        return { ...state, name, timezone }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
