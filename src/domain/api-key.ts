import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const apiKeyStream = (apiKeyId: string) => `apikey-${apiKeyId}`

/** `organization-admin` keys manage every workspace of their organization; `workspace` keys only their own. */
export const ApiKeyRole = Type.Union([Type.Literal('organization-admin'), Type.Literal('workspace')])
export type ApiKeyRole = Static<typeof ApiKeyRole>

const ApiKeyIssued = Type.Object({
  apiKeyId: Uuid,
  organizationId: Uuid,
  workspaceId: Uuid,
  name: Type.String({ minLength: 1 }),
  role: ApiKeyRole,
  /** SHA-256 (hex) of the key; the key itself is shown once and never stored. */
  keyHash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** The key's first characters, so people can tell keys apart. */
  keyPrefix: Type.String(),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  /** Signs webhooks (HMAC), so it must stay readable. */
  signingSecret: Type.String({ pattern: '^whsec_' }),
  issuedAt: Timestamp,
})

const ApiKeyRevoked = Type.Object({ apiKeyId: Uuid, revokedAt: Timestamp })

export type ApiKeyEvent =
  | { type: 'ApiKeyIssued'; data: Static<typeof ApiKeyIssued> }
  | { type: 'ApiKeyRevoked'; data: Static<typeof ApiKeyRevoked> }

export type ApiKeyCommand =
  | { type: 'IssueApiKey'; data: Omit<Static<typeof ApiKeyIssued>, 'issuedAt'> & { now: string } }
  | { type: 'RevokeApiKey'; data: { apiKeyId: string; now: string } }

export type ApiKey =
  | { status: 'none' }
  | { status: 'active' | 'revoked'; apiKeyId: string; organizationId: string; workspaceId: string; role: ApiKeyRole }

export const apiKey: Decider<ApiKeyCommand, ApiKey, ApiKeyEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { ApiKeyIssued, ApiKeyRevoked },

  decide(command, state) {
    switch (command.type) {
      case 'IssueApiKey': {
        if (state.status !== 'none') throw new ConflictError(`API key ${command.data.apiKeyId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'ApiKeyIssued', data: { ...rest, issuedAt: now } }]
      }
      case 'RevokeApiKey':
        if (state.status === 'none') throw new NotFoundError(`API key ${command.data.apiKeyId} not found`)
        if (state.status === 'revoked') return []
        return [{ type: 'ApiKeyRevoked', data: { apiKeyId: command.data.apiKeyId, revokedAt: command.data.now } }]
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { apiKeyId, organizationId, workspaceId, role } = event.data
        return { status: 'active', apiKeyId, organizationId, workspaceId, role }
      }
      case 'ApiKeyRevoked':
        return state.status === 'none' ? state : { ...state, status: 'revoked' }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
