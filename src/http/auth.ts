import type { FastifyReply, FastifyRequest } from 'fastify'
import type { DashboardSession } from '../auth/dashboard-sessions.js'
import type { EditorAuth } from '../auth/editor-auth.js'
import { hashApiKey, API_KEY_PREFIX } from '../commands/api-keys.js'
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js'
import { isUuid } from '../ids.js'
import { findActiveApiKeyByHash, type ApiKeyPrincipal } from '../projections/api-keys.js'
import { findWorkspace } from '../projections/workspaces.js'
import type { DbOrTrx } from '../store/database.js'
import type { SessionCaller } from '../commands/sessions.js'
import { BoundedMap } from '../bounded-map.js'

/** A request authenticated by an API key (`X-Api-Key`). */
export interface ApiKeyCaller extends ApiKeyPrincipal {
  kind: 'api-key'
  /** Recorded in the metadata of the events it causes. */
  actor: string
}

/** The embedded editor, by the bearer access token of an OAuth client: one workspace, editor routes only. */
export interface EditorCaller {
  kind: 'editor'
  clientId: string
  organizationId: string
  workspaceId: string
  role: 'workspace'
  actor: string
}

export type Principal = ApiKeyCaller | EditorCaller

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set on every `/v1` route. */
    principal: Principal
  }
  interface FastifyContextConfig {
    /** The embedded editor's bearer token may call this route; on every other `/v1` route it gets 403. */
    editor?: boolean
  }
}

/**
 * Looks API keys up by their SHA-256 and remembers found keys for `ttlMs`, so a revoked key stops
 * working within that time. Unknown keys are not remembered: a key issued a moment ago works at once.
 */
export class ApiKeyAuthenticator {
  private readonly cache: BoundedMap<string, { principal: ApiKeyPrincipal; expiresAt: number }>

  private readonly db: DbOrTrx
  private readonly ttlMs: number

  constructor(
    db: DbOrTrx,
    ttlMs = 5000,
    maxEntries = 10_000,
  ) {
    this.db = db
    this.ttlMs = ttlMs
    this.cache = new BoundedMap(maxEntries)
  }

  async authenticate(key: string): Promise<ApiKeyPrincipal | undefined> {
    if (!key.startsWith(API_KEY_PREFIX)) return undefined
    const hash = hashApiKey(key)
    const cached = this.cache.get(hash)
    if (cached && cached.expiresAt > Date.now()) return cached.principal
    this.cache.delete(hash)
    const principal = await findActiveApiKeyByHash(this.db, hash)
    if (principal) {
      this.cache.set(hash, { principal, expiresAt: Date.now() + this.ttlMs })
    }
    return principal
  }
}

const BEARER = /^bearer +(\S+) *$/i

/** The request header that chooses, for an organization-admin key, another workspace of its organization to act in. */
export const WORKSPACE_HEADER = 'x-workspace-id'

/**
 * The organization of each workspace asked for by {@link WORKSPACE_HEADER}. A workspace never
 * changes organization and is never deleted, so a found one is kept; an unknown one is asked again
 * (it may have been created a moment ago).
 */
export class WorkspaceOrganizations {
  private readonly known = new BoundedMap<string, string>(10_000)
  private readonly db: DbOrTrx

  constructor(db: DbOrTrx) {
    this.db = db
  }

  async of(workspaceId: string): Promise<string | undefined> {
    const known = this.known.get(workspaceId)
    if (known) return known
    const found = await findWorkspace(this.db, workspaceId)
    if (found) this.known.set(workspaceId, found.organization_id)
    return found?.organization_id
  }
}

/**
 * The caller acting where {@link WORKSPACE_HEADER} says: its own workspace without the header; with
 * it, another workspace of its organization for an organization-admin key (403 for any other caller),
 * and 404 for a workspace of another organization or none, as for any record out of reach.
 */
async function inChosenWorkspace<P extends Principal>(request: FastifyRequest, principal: P, workspaces: WorkspaceOrganizations): Promise<P> {
  const chosen = request.headers[WORKSPACE_HEADER]
  if (chosen === undefined || chosen === principal.workspaceId) return principal
  if (!isUuid(chosen)) throw new BadRequestError(`headers/${WORKSPACE_HEADER} must be a workspace id (UUID)`)
  if ((await workspaces.of(chosen)) !== principal.organizationId) throw new NotFoundError(`workspace ${chosen} not found`)
  if (principal.role !== 'organization-admin') throw new ForbiddenError(`Only an organization-admin key can act in another workspace of its organization (${WORKSPACE_HEADER})`)
  return { ...principal, workspaceId: chosen }
}

/** The dashboard session of a request's cookie (with its CSRF check), if it carries one. */
export type DashboardSessionLookup = (request: FastifyRequest) => Promise<DashboardSession | undefined>

/**
 * The one authentication hook of `/v1`. An `X-Api-Key` header is checked first, whatever else
 * the request carries. Otherwise a bearer token is the editor's: a bad one is 401, and a good one
 * reaches only routes whose config says `editor: true` (403 elsewhere). Otherwise the dashboard's
 * session cookie acts as the API key it signed in with. Then {@link WORKSPACE_HEADER} may move the
 * caller to another workspace of its organization.
 */
export const authenticate = (apiKeys: ApiKeyAuthenticator, editors: EditorAuth, dashboardSession: DashboardSessionLookup, workspaces: WorkspaceOrganizations) => {
  const callerOf = async (request: FastifyRequest): Promise<Principal> => {
    const key = request.headers['x-api-key']
    const bearer = key === undefined ? BEARER.exec(request.headers.authorization ?? '')?.[1] : undefined
    if (bearer !== undefined) {
      const grant = await editors.authenticate(bearer)
      if (!grant) {
        throw new UnauthorizedError(
          bearer.startsWith(API_KEY_PREFIX)
            ? "Invalid or expired access token: this looks like an API key, which goes in the X-Api-Key header (Bearer tokens are the editor's)"
            : 'Invalid or expired access token',
        )
      }
      if (request.routeOptions.config.editor !== true) throw new ForbiddenError('The editor access token does not reach this endpoint')
      return { kind: 'editor', ...grant, role: 'workspace' }
    }
    if (key === undefined) {
      const session = await dashboardSession(request)
      if (session) return { kind: 'api-key', ...session.principal, actor: `apikey:${session.principal.apiKeyId}` }
    }
    if (typeof key !== 'string' || key === '') throw new UnauthorizedError('Missing X-Api-Key header')
    const principal = await apiKeys.authenticate(key)
    if (!principal) throw new UnauthorizedError('Invalid API key')
    return { kind: 'api-key', ...principal, actor: `apikey:${principal.apiKeyId}` }
  }
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    request.principal = await inChosenWorkspace(request, await callerOf(request), workspaces)
  }
}

/**
 * The caller's API key, for routes that act as a key (its id, its callback). The editor never
 * reaches them (no `editor` config); this keeps the types honest.
 */
export function apiKeyOf(request: FastifyRequest): ApiKeyCaller {
  if (request.principal.kind !== 'api-key') throw new ForbiddenError('The editor access token does not reach this endpoint')
  return request.principal
}

/** The caller as a session sees it: a key, or the editor (which reaches preview sessions only). */
export function sessionCallerOf(request: FastifyRequest): SessionCaller {
  const { principal } = request
  return { workspaceId: principal.workspaceId, organizationId: principal.organizationId, apiKeyId: principal.kind === 'api-key' ? principal.apiKeyId : null }
}
