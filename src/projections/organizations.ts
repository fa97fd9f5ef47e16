import type { OrganizationEvent } from '../domain/organization.js'
import type { Projection } from './projection.js'

export const organizationsProjection: Projection = {
  name: 'organizations',
  streamPrefixes: ['organization-'],
  tables: ['organizations'],
  async apply(trx, recorded) {
    const event = recorded as unknown as OrganizationEvent
    switch (event.type) {
      case 'OrganizationCreated':
        await trx
          .insertInto('organizations')
          .values({ id: event.data.organizationId, name: event.data.name, created_at: event.data.createdAt })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
    }
  },
}
