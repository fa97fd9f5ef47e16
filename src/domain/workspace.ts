import { Type, type Static } from '@sinclair/typebox'
import { ConflictError } from '../errors.js'
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

export type WorkspaceEvent = { type: 'WorkspaceCreated'; data: Static<typeof WorkspaceCreated> }

export type WorkspaceCommand = {
  type: 'CreateWorkspace'
  data: { workspaceId: string; organizationId: string; name: string; timezone: string | null; now: string }
}

export type Workspace = { status: 'none' } | { status: 'active'; workspaceId: string; organizationId: string; name: string; timezone: string | null }

export const workspace: Decider<WorkspaceCommand, Workspace, WorkspaceEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { WorkspaceCreated },

  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkspace': {
        if (state.status !== 'none') throw new ConflictError(`workspace ${command.data.workspaceId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'WorkspaceCreated', data: { ...rest, createdAt: now } }]
      }
      default: {
        const exhaustive: never = command.type
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
      default: {
        const exhaustive: never = event.type
        return exhaustive
      }
    }
  },
}
