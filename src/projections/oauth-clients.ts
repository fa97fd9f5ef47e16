import type { OAuthClientEvent } from '../domain/oauth-client.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type ListPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'

export const oauthClientsProjection = defineProjection<OAuthClientEvent>({
  name: 'oauth-clients',
  streamPrefixes: ['client-'],
  tables: ['oauth_clients'],
  async apply(trx, event) {
    switch (event.type) {
      case 'OAuthClientRegistered': {
        const d = event.data
        await trx
          .insertInto('oauth_clients')
          .values({
            id: d.clientId,
            organization_id: d.organizationId,
            workspace_id: d.workspaceId,
            name: d.name,
            secret_hash: d.secretHash,
            created_at: d.registeredAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      }
      case 'OAuthClientRevoked':
        await trx.updateTable('oauth_clients').set({ revoked_at: event.data.revokedAt }).where('id', '=', event.data.clientId).execute()
        break
    }
  },
})

export interface OAuthClientItem {
  clientId: string
  name: string
  createdAt: string
}

/** Live clients of one workspace, oldest first. */
export async function listOAuthClients(
  db: DbOrTrx,
  query: Paging & { workspaceId: string },
): Promise<ListPage<OAuthClientItem>> {
  const matching = db.selectFrom('oauth_clients').where('workspace_id', '=', query.workspaceId).where('revoked_at', 'is', null)
  const ordered = matching.select(['id', 'name', 'created_at']).orderBy('created_at').orderBy('id')
  return listPage({ matching, ordered }, query, (row) => ({ clientId: row.id, name: row.name, createdAt: new Date(row.created_at).toISOString() }))
}

/** What the embed token endpoint needs to check a live client's credentials (`clientId` must be a UUID); undefined for unknown or revoked ids. */
export async function findOAuthClientCredentials(
  db: DbOrTrx,
  clientId: string,
): Promise<{ clientId: string; organizationId: string; workspaceId: string; secretHash: string } | undefined> {
  const row = await db
    .selectFrom('oauth_clients')
    .select(['id', 'organization_id', 'workspace_id', 'secret_hash'])
    .where('id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row && { clientId: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, secretHash: row.secret_hash }
}
