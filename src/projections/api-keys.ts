import type { ApiKeyEvent, ApiKeyRecord, ApiKeyRole, KeyActor } from '../domain/api-key.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type ListPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'

export const apiKeysProjection = defineProjection<ApiKeyEvent>({
  name: 'api-keys',
  streamPrefixes: ['apikey-'],
  tables: ['api_keys'],
  async apply(trx, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const d = event.data
        await trx
          .insertInto('api_keys')
          .values({
            id: d.apiKeyId,
            organization_id: d.organizationId,
            workspace_id: d.workspaceId,
            name: d.name,
            role: d.role,
            key_hash: d.keyHash,
            key_prefix: d.keyPrefix,
            callback_url: d.callbackUrl,
            signing_secret: d.signingSecret,
            created_at: d.issuedAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      }
      case 'ApiKeyChanged':
        await trx
          .updateTable('api_keys')
          .set({ name: event.data.name, callback_url: event.data.callbackUrl })
          .where('id', '=', event.data.apiKeyId)
          .execute()
        break
      case 'ApiKeyRevoked':
        await trx.updateTable('api_keys').set({ revoked_at: event.data.revokedAt }).where('id', '=', event.data.apiKeyId).execute()
        break
    }
  },
})

/** What a request authenticated by an API key may act as. */
export interface ApiKeyPrincipal extends KeyActor {
  callbackUrl: string | null
}

export async function findActiveApiKeyByHash(db: DbOrTrx, keyHash: string): Promise<ApiKeyPrincipal | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'organization_id', 'workspace_id', 'role', 'callback_url'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row
    ? { apiKeyId: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, role: row.role as ApiKeyRole, callbackUrl: row.callback_url }
    : undefined
}

/** The hash of the live key with this id (a sign-in link names its key by hash). */
export async function liveApiKeyHash(db: DbOrTrx, apiKeyId: string): Promise<string | undefined> {
  const row = await db.selectFrom('api_keys').select('key_hash').where('id', '=', apiKeyId).where('revoked_at', 'is', null).executeTakeFirst()
  return row?.key_hash
}

/** The hash of the oldest live organization-admin key: the one a single-tenant install starts with. */
export async function oldestAdminKeyHash(db: DbOrTrx): Promise<string | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select('key_hash')
    .where('role', '=', 'organization-admin')
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
  return row?.key_hash
}

/**
 * Live keys `by` may manage, oldest first, optionally of one workspace or organization: the same
 * reach as `canManage` in the domain (an admin: its organization; a workspace key: the workspace
 * keys of its workspace; the operator, from the CLI: every organization).
 */
export async function listApiKeys(
  db: DbOrTrx,
  query: Paging & { by: KeyActor | 'operator'; organizationId?: string; workspaceId?: string },
): Promise<ListPage<ApiKeyRecord>> {
  const { by } = query
  let matching = db.selectFrom('api_keys').where('revoked_at', 'is', null)
  if (by !== 'operator') {
    matching = matching.where('organization_id', '=', by.organizationId)
    if (by.role !== 'organization-admin') matching = matching.where('workspace_id', '=', by.workspaceId).where('role', '=', 'workspace')
  }
  if (query.organizationId !== undefined) matching = matching.where('organization_id', '=', query.organizationId)
  if (query.workspaceId !== undefined) matching = matching.where('workspace_id', '=', query.workspaceId)
  const ordered = matching.select(['id', 'name', 'workspace_id', 'role', 'callback_url', 'key_prefix', 'created_at']).orderBy('created_at').orderBy('id')
  return listPage({ matching, ordered }, query, (row) => ({
    id: row.id,
    name: row.name,
    workspaceId: row.workspace_id,
    role: row.role as ApiKeyRole,
    callbackUrl: row.callback_url,
    keyPrefix: row.key_prefix,
    createdAt: new Date(row.created_at).toISOString(),
  }))
}
