import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const sectorStream = (sectorId: string) => `sector-${sectorId}`

/** Two sectors of a workspace may not share this: their names compared without case and surrounding spaces. */
export const sectorNameKey = (name: string) => name.normalize('NFC').trim().toLowerCase()

const SectorCreated = Type.Object({ sectorId: Uuid, workspaceId: Uuid, organizationId: Uuid, name: Type.String({ minLength: 1 }), createdAt: Timestamp })
const SectorRenamed = Type.Object({ sectorId: Uuid, name: Type.String({ minLength: 1 }), renamedAt: Timestamp })
const SectorDeleted = Type.Object({ sectorId: Uuid, deletedAt: Timestamp })

export type SectorEvent =
  | { type: 'SectorCreated'; data: Static<typeof SectorCreated> }
  | { type: 'SectorRenamed'; data: Static<typeof SectorRenamed> }
  | { type: 'SectorDeleted'; data: Static<typeof SectorDeleted> }

/** `workspaceId` is the caller's: a sector of another workspace is answered as not found. */
export type SectorCommand =
  | { type: 'CreateSector'; data: { sectorId: string; workspaceId: string; organizationId: string; name: string; now: string } }
  | { type: 'RenameSector'; data: { sectorId: string; workspaceId: string; name: string | undefined; now: string } }
  | { type: 'DeleteSector'; data: { sectorId: string; workspaceId: string; now: string } }

export type Sector =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; sectorId: string; workspaceId: string; name: string }

const reachable = (state: Sector, sectorId: string, workspaceId: string) => {
  if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`sector ${sectorId} not found`)
  return state
}

export const sector: Decider<SectorCommand, Sector, SectorEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { SectorCreated, SectorRenamed, SectorDeleted },

  decide(command, state) {
    switch (command.type) {
      case 'CreateSector': {
        if (state.status !== 'none') throw new ConflictError(`sector ${command.data.sectorId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'SectorCreated', data: { ...rest, createdAt: now } }]
      }
      case 'RenameSector': {
        const current = reachable(state, command.data.sectorId, command.data.workspaceId)
        const { name } = command.data
        if (name === undefined || name === current.name) return []
        return [{ type: 'SectorRenamed', data: { sectorId: command.data.sectorId, name, renamedAt: command.data.now } }]
      }
      case 'DeleteSector':
        reachable(state, command.data.sectorId, command.data.workspaceId)
        return [{ type: 'SectorDeleted', data: { sectorId: command.data.sectorId, deletedAt: command.data.now } }]
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SectorCreated':
        return { status: 'active', sectorId: event.data.sectorId, workspaceId: event.data.workspaceId, name: event.data.name }
      case 'SectorRenamed':
        return state.status === 'none' ? state : { ...state, name: event.data.name }
      case 'SectorDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
