import { Type, type Static } from '@sinclair/typebox'
import { ConflictError } from '../errors.js'
import type { Decider } from './decider.js'
import { FlowDefinition } from './flow-definition.js'
import { Timestamp, Uuid } from './schemas.js'

export const flowStream = (flowId: string) => `flow-${flowId}`

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

export type FlowEvent = { type: 'FlowCreated'; data: Static<typeof FlowCreated> } | { type: 'FlowPublished'; data: Static<typeof FlowPublished> }

export type FlowCommand = {
  type: 'CreateFlow'
  data: { flowId: string; workspaceId: string; organizationId: string; name: string; definition: FlowDefinition; now: string }
}

export type Flow =
  | { status: 'none' }
  | { status: 'active'; flowId: string; workspaceId: string; name: string; draft: FlowDefinition; publishedVersion: number }

export const flow: Decider<FlowCommand, Flow, FlowEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { FlowCreated, FlowPublished },

  decide(command, state) {
    switch (command.type) {
      case 'CreateFlow': {
        if (state.status !== 'none') throw new ConflictError(`flow ${command.data.flowId} already exists`)
        const { now, ...rest } = command.data
        // A new flow can run at once: its first draft is published as version 1.
        return [
          { type: 'FlowCreated', data: { ...rest, createdAt: now } },
          { type: 'FlowPublished', data: { flowId: rest.flowId, version: 1, definition: rest.definition, publishedAt: now } },
        ]
      }
      default: {
        const exhaustive: never = command.type
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'FlowCreated':
        return { status: 'active', flowId: event.data.flowId, workspaceId: event.data.workspaceId, name: event.data.name, draft: event.data.definition, publishedVersion: 0 }
      case 'FlowPublished':
        return state.status === 'none' ? state : { ...state, publishedVersion: event.data.version }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
