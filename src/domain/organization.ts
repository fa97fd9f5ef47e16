import { Type, type Static } from '@sinclair/typebox'
import { ConflictError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const organizationStream = (organizationId: string) => `organization-${organizationId}`

const OrganizationCreated = Type.Object({ organizationId: Uuid, name: Type.String({ minLength: 1 }), createdAt: Timestamp })

export type OrganizationEvent = { type: 'OrganizationCreated'; data: Static<typeof OrganizationCreated> }

export type OrganizationCommand = { type: 'CreateOrganization'; data: { organizationId: string; name: string; now: string } }

export type Organization = { status: 'none' } | { status: 'active'; organizationId: string; name: string }

export const organization: Decider<OrganizationCommand, Organization, OrganizationEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { OrganizationCreated },

  decide(command, state) {
    switch (command.type) {
      case 'CreateOrganization':
        if (state.status !== 'none') throw new ConflictError(`organization ${command.data.organizationId} already exists`)
        return [{ type: 'OrganizationCreated', data: { organizationId: command.data.organizationId, name: command.data.name, createdAt: command.data.now } }]
      default: {
        const exhaustive: never = command.type
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        return { status: 'active', organizationId: event.data.organizationId, name: event.data.name }
      default: {
        const exhaustive: never = event.type
        return exhaustive
      }
    }
  },
}
