import type { OrganizationEvent } from '../domain/organization.js'
import { defineProjection } from './projection.js'

export const organizationsProjection = defineProjection<OrganizationEvent>({
  name: 'organizations',
  streamPrefixes: ['organization-'],
  tables: ['organizations'],
  async apply(trx, event) {
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
})
