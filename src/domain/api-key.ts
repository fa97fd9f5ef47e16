import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'

export const apiKeyStream = (apiKeyId: string) => `apikey-${apiKeyId}`

/** `organization-admin` keys manage every workspace of their organization; `workspace` keys only their own. */
export const ApiKeyRole = Type.Union([Type.Literal('organization-admin'), Type.Literal('workspace')])
export type ApiKeyRole = Static<typeof ApiKeyRole>

const CallbackUrl = Type.Union([Type.String(), Type.Null()])

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
  callbackUrl: CallbackUrl,
  /** Signs webhooks (HMAC), so it must stay readable. */
  signingSecret: Type.String({ pattern: '^whsec_' }),
  issuedAt: Timestamp,
})

/** The key's name and callback after the change (both, whichever changed). */
const ApiKeyChanged = Type.Object({ apiKeyId: Uuid, name: Type.String({ minLength: 1 }), callbackUrl: CallbackUrl, changedAt: Timestamp })

const ApiKeyRevoked = Type.Object({ apiKeyId: Uuid, revokedAt: Timestamp })

export type ApiKeyEvent =
  | { type: 'ApiKeyIssued'; data: Static<typeof ApiKeyIssued> }
  | { type: 'ApiKeyChanged'; data: Static<typeof ApiKeyChanged> }
  | { type: 'ApiKeyRevoked'; data: Static<typeof ApiKeyRevoked> }

/** An API key acting on other keys. Commands without one come from the operator (CLI, bootstrap). */
export interface KeyActor {
  apiKeyId: string
  organizationId: string
  workspaceId: string
  role: ApiKeyRole
}

export type ApiKeyCommand =
  | { type: 'IssueApiKey'; data: Omit<Static<typeof ApiKeyIssued>, 'issuedAt'> & { now: string } }
  | { type: 'ChangeApiKey'; data: { apiKeyId: string; name?: string; callbackUrl?: string; by?: KeyActor; now: string } }
  | { type: 'RevokeApiKey'; data: { apiKeyId: string; by?: KeyActor; now: string } }

/** A key as its owners see it: never its hash or its signing secret. */
export interface ApiKeyRecord {
  id: string
  name: string
  workspaceId: string
  role: ApiKeyRole
  callbackUrl: string | null
  keyPrefix: string
  createdAt: string
}

export type ApiKey =
  | { status: 'none' }
  | {
      status: 'active' | 'revoked'
      apiKeyId: string
      organizationId: string
      workspaceId: string
      role: ApiKeyRole
      name: string
      callbackUrl: string | null
      keyPrefix: string
      createdAt: string
    }

/**
 * The keys an actor may see and manage: an organization admin every key of its organization, a
 * workspace key the workspace keys of its own workspace (never an admin key, which could redirect
 * the admin's webhooks or lock the organization out). The read model's list applies the same rule.
 */
export const canManage = (actor: KeyActor, key: { organizationId: string; workspaceId: string; role: ApiKeyRole }): boolean =>
  actor.organizationId === key.organizationId &&
  (actor.role === 'organization-admin' || (actor.workspaceId === key.workspaceId && key.role === 'workspace'))

/**
 * Whether `actor` may issue a key of `role` for `workspaceId`, whose organization is
 * `workspaceOrganizationId` (undefined: no such workspace). A workspace key is refused (403) before
 * the target's existence matters, so it learns nothing about other workspaces; anything outside
 * the organization is not found (404).
 */
export function authorizeIssue(actor: KeyActor, target: { workspaceId: string; role: ApiKeyRole }, workspaceOrganizationId: string | undefined): void {
  if (actor.role !== 'organization-admin') {
    if (target.workspaceId !== actor.workspaceId) throw new ForbiddenError('A workspace API key can only create keys for its own workspace')
    if (target.role !== 'workspace') throw new ForbiddenError('Only an organization-admin API key can create organization-admin keys')
  }
  if (workspaceOrganizationId !== actor.organizationId) throw new NotFoundError(`workspace ${target.workspaceId} not found`)
}

const reachable = (state: ApiKey, apiKeyId: string, by: KeyActor | undefined) => {
  if (state.status !== 'active' || (by && !canManage(by, state))) throw new NotFoundError(`API key ${apiKeyId} not found`)
  return state
}

export const apiKey: Decider<ApiKeyCommand, ApiKey, ApiKeyEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { ApiKeyIssued, ApiKeyChanged, ApiKeyRevoked },

  decide(command, state) {
    switch (command.type) {
      case 'IssueApiKey': {
        if (state.status !== 'none') throw new ConflictError(`API key ${command.data.apiKeyId} already exists`)
        const { now, ...rest } = command.data
        return [{ type: 'ApiKeyIssued', data: { ...rest, issuedAt: now } }]
      }
      case 'ChangeApiKey': {
        const current = reachable(state, command.data.apiKeyId, command.data.by)
        const name = command.data.name ?? current.name
        const callbackUrl = command.data.callbackUrl ?? current.callbackUrl
        if (name === current.name && callbackUrl === current.callbackUrl) return []
        return [{ type: 'ApiKeyChanged', data: { apiKeyId: command.data.apiKeyId, name, callbackUrl, changedAt: command.data.now } }]
      }
      case 'RevokeApiKey': {
        const { apiKeyId, by, now } = command.data
        reachable(state, apiKeyId, by)
        // Keys are revoked by another key, so an organization always keeps at least one admin key.
        if (by?.apiKeyId === apiKeyId) throw new ConflictError('An API key cannot revoke itself; revoke it with another key')
        return [{ type: 'ApiKeyRevoked', data: { apiKeyId, revokedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { apiKeyId, organizationId, workspaceId, role, name, callbackUrl, keyPrefix, issuedAt } = event.data
        return { status: 'active', apiKeyId, organizationId, workspaceId, role, name, callbackUrl, keyPrefix, createdAt: issuedAt }
      }
      case 'ApiKeyChanged':
        return state.status === 'none' ? state : { ...state, name: event.data.name, callbackUrl: event.data.callbackUrl }
      case 'ApiKeyRevoked':
        return state.status === 'none' ? state : { ...state, status: 'revoked' }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
