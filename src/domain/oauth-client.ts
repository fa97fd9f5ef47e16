import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const oauthClientStream = (clientId: string) => `client-${clientId}`

const OAuthClientRegistered = Type.Object({
  clientId: Uuid,
  organizationId: Uuid,
  workspaceId: Uuid,
  name: Type.String({ minLength: 1 }),
  /** A slow, salted hash (`scrypt$N$r$p$salt$hash`); the secret itself is shown once and never stored. */
  secretHash: Type.String({ pattern: '^scrypt\\$' }),
  registeredAt: Timestamp,
})

const OAuthClientRevoked = Type.Object({ clientId: Uuid, revokedAt: Timestamp })

export type OAuthClientEvent =
  | { type: 'OAuthClientRegistered'; data: Static<typeof OAuthClientRegistered> }
  | { type: 'OAuthClientRevoked'; data: Static<typeof OAuthClientRevoked> }

/** `workspaceId` of a revocation is the caller's: a client of another workspace is answered as not found. */
export type OAuthClientCommand =
  | { type: 'RegisterOAuthClient'; data: Omit<Static<typeof OAuthClientRegistered>, 'registeredAt'> & { now: string } }
  | { type: 'RevokeOAuthClient'; data: { clientId: string; workspaceId: string; now: string } }

export type OAuthClient =
  | { status: 'none' }
  | { status: 'active' | 'revoked'; clientId: string; organizationId: string; workspaceId: string; name: string; createdAt: string }

export const oauthClient: Decider<OAuthClientCommand, OAuthClient, OAuthClientEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { OAuthClientRegistered, OAuthClientRevoked },

  decide(command, state) {
    switch (command.type) {
      case 'RegisterOAuthClient': {
        if (state.status !== 'none') throw new ConflictError(`OAuth client ${command.data.clientId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'OAuthClientRegistered', data: { ...rest, registeredAt: now } }]
      }
      case 'RevokeOAuthClient': {
        const { clientId, workspaceId, now } = command.data
        if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`OAuth client ${clientId} not found`)
        return [{ type: 'OAuthClientRevoked', data: { clientId, revokedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthClientRegistered': {
        const { clientId, organizationId, workspaceId, name, registeredAt } = event.data
        return { status: 'active', clientId, organizationId, workspaceId, name, createdAt: registeredAt }
      }
      case 'OAuthClientRevoked':
        return state.status === 'none' ? state : { ...state, status: 'revoked' }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
