import type { ApiKeyEvent, ApiKeyRole } from '../domain/api-key.js'
import type { DbOrTrx } from '../store/database.js'
import type { Projection } from './projection.js'

export const apiKeysProjection: Projection = {
  name: 'api-keys',
  streamPrefixes: ['apikey-'],
  tables: ['api_keys'],
  async apply(trx, recorded) {
    const event = recorded as unknown as ApiKeyEvent
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
      case 'ApiKeyRevoked':
        await trx.updateTable('api_keys').set({ revoked_at: event.data.revokedAt }).where('id', '=', event.data.apiKeyId).execute()
        break
    }
  },
}

/** What a request authenticated by an API key may act as. */
export interface ApiKeyPrincipal {
  apiKeyId: string
  organizationId: string
  workspaceId: string
  role: ApiKeyRole
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
