import t from 'tap'
import { organization, organizationStream, type OrganizationCommand, type OrganizationEvent } from '../../src/domain/organization.js'
import { ConflictError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const now = '2026-01-02T03:04:05.678Z'

const create = (name = 'Acme'): OrganizationCommand => ({ type: 'CreateOrganization', data: { organizationId: org, name, now } })
const created: OrganizationEvent = { type: 'OrganizationCreated', data: { organizationId: org, name: 'Acme', createdAt: now } }

t.test('CreateOrganization', async (t) => {
  const { given } = spec(t, organization)
  const state = given().when(create()).then([created], 'a new organization')
  t.same(state, { status: 'active', organizationId: org, name: 'Acme' }, 'its state names it')
  given(created).when(create('Other')).thenRejects(ConflictError, 'the same id twice')
  given().when(create('')).thenRejects(/name/, 'the event schema wants a name')
  examples(t, organizationStream, [['one stream per organization', [org], `organization-${org}`]])
})
