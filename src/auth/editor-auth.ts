import type { ScryptCost } from '../commands/oauth-clients.js'
import { UnauthorizedError } from '../errors.js'
import type { Metrics } from '../metrics/registry.js'
import type { Db } from '../store/database.js'
import { authenticateClient } from './client-credentials.js'
import { liveGrant, type LiveGrant } from './live-grant.js'
import { consumeOneTimeToken, issueOneTimeToken } from './one-time-tokens.js'
import { rotateRefreshToken, startTokenFamily } from './refresh.js'
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken, verifyAccessToken, type EditorGrant } from './tokens.js'
import { BoundedMap } from '../bounded-map.js'

/** The body of a successful exchange or refresh (OAuth 2.0 token response names). */
export interface TokenResponse {
  access_token: string
  refresh_token: string
  token_type: 'Bearer'
  expires_in: number
}

export interface EditorAuthDeps {
  db: Db
  /** Signs and checks access tokens (HS256). */
  signingKey: Uint8Array
  now(): Date
  /** How long a live client (or dashboard session) is trusted before it is looked up again: a revoked client's access tokens stop within this time. */
  clientCacheMs?: number
  /** The scrypt cost of client secrets, for the decoy hash; production's by default. */
  clientSecretCost?: ScryptCost
  /** Counts one-time token exchanges by result. */
  metrics?: Metrics | undefined
}

// One message for every way each step can fail: a caller learns nothing about which part was wrong.
const BAD_CLIENT = 'Invalid client credentials'
const BAD_OTT = 'Invalid or expired one-time token'
const BAD_REFRESH = 'Invalid or expired refresh token'

/** The embedded editor's three steps (client credentials → OTT → tokens), refresh, and bearer checks. */
export class EditorAuth {
  private readonly liveGrants = new BoundedMap<string, { grant: LiveGrant; expiresAt: number }>(10_000)
  private readonly clientCacheMs: number

  private readonly deps: EditorAuthDeps

  constructor(deps: EditorAuthDeps) {
    this.deps = deps
    this.clientCacheMs = deps.clientCacheMs ?? 5000
  }

  /** Step 1: the customer's backend trades its client credentials (HTTP Basic) for a one-time token. */
  async issueOneTimeToken(authorization: string | undefined): Promise<string> {
    const grant = await authenticateClient(this.deps.db, authorization, this.deps.clientSecretCost)
    if (!grant) throw new UnauthorizedError(BAD_CLIENT)
    return issueOneTimeToken(this.deps.db, grant, this.deps.now())
  }

  /** Step 2: the editor trades the one-time token, once, for an access token and the first refresh token of a new family. */
  async exchange(ott: string): Promise<TokenResponse> {
    try {
      const tokens = await this.exchangeOnce(ott)
      this.deps.metrics?.ottExchanges.inc({ result: 'exchanged' })
      return tokens
    } catch (error) {
      this.deps.metrics?.ottExchanges.inc({ result: error instanceof UnauthorizedError ? 'rejected' : 'error' })
      throw error
    }
  }

  private async exchangeOnce(ott: string): Promise<TokenResponse> {
    const now = this.deps.now()
    // The client may have been revoked (or the dashboard session ended) since the OTT was issued; the OTT then stays unused and expires.
    const issued = await this.deps.db.transaction().execute(async (trx) => {
      const grant = await consumeOneTimeToken(trx, ott, now)
      if (!grant || !(await liveGrant(trx, grant, now))) throw new UnauthorizedError(BAD_OTT)
      return { grant, refreshToken: await startTokenFamily(trx, grant, now) }
    })
    return this.tokenResponse(issued.grant, issued.refreshToken, now)
  }

  /** Rotation: a refresh token is good once; its reuse revokes its whole family. */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const now = this.deps.now()
    const rotation = await rotateRefreshToken(this.deps.db, refreshToken, now)
    if (rotation.outcome !== 'rotated') throw new UnauthorizedError(BAD_REFRESH)
    return this.tokenResponse(rotation.grant, rotation.refreshToken, now)
  }

  /** The grant of a bearer access token whose holder (client or dashboard session) is still live; undefined otherwise. */
  async authenticate(accessToken: string): Promise<LiveGrant | undefined> {
    const now = this.deps.now()
    const claimed = await verifyAccessToken(this.deps.signingKey, accessToken, now)
    if (!claimed) return undefined
    const key = `${claimed.clientId}/${claimed.organizationId}/${claimed.workspaceId}`
    const cached = this.liveGrants.get(key)
    if (cached && cached.expiresAt > Date.now()) return cached.grant
    this.liveGrants.delete(key)
    const grant = await liveGrant(this.deps.db, claimed, now)
    if (!grant) return undefined
    this.liveGrants.set(key, { grant, expiresAt: Date.now() + this.clientCacheMs })
    return grant
  }

  /** A one-time token for an editor signed in by the dashboard session `sessionId`, on `workspace`. */
  async issueDashboardOneTimeToken(sessionId: string, workspace: { organizationId: string; workspaceId: string }): Promise<string> {
    return issueOneTimeToken(this.deps.db, { clientId: sessionId, ...workspace }, this.deps.now())
  }

  private async tokenResponse(grant: EditorGrant, refreshToken: string, now: Date): Promise<TokenResponse> {
    return {
      access_token: await signAccessToken(this.deps.signingKey, grant, now),
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
    }
  }
}
