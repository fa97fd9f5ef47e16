import t from 'tap'
import { EventSchemaError } from '../../src/commands/handle.js'
import { oauthClient, oauthClientStream, type OAuthClientCommand, type OAuthClientEvent } from '../../src/domain/oauth-client.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const clientId = '0190a0b0-0000-7000-8000-000000000201'
const registeredAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'
const secretHash = 'scrypt$32768$8$1$c2FsdA$aGFzaA'

const registered = (at = registeredAt): OAuthClientEvent => ({
  type: 'OAuthClientRegistered',
  data: { clientId, organizationId: org, workspaceId: ws, name: 'Portal', secretHash, registeredAt: at },
})
const revoked: OAuthClientEvent = { type: 'OAuthClientRevoked', data: { clientId, revokedAt: now } }

t.test('RegisterOAuthClient', async (t) => {
  const { given } = spec(t, oauthClient)
  const register: OAuthClientCommand = { type: 'RegisterOAuthClient', data: { clientId, organizationId: org, workspaceId: ws, name: 'Portal', secretHash, now } }
  given().when(register).then([registered(now)], 'a new client, registered now')
  given(registered()).when(register).thenRejects(ConflictError, 'the same id twice')
  given(revoked).when(register).then([registered(now)], 'a revocation without a registration leaves nothing behind')
  given().when({ ...register, data: { ...register.data, secretHash: 'plain' } }).thenRejects({ type: EventSchemaError, message: /secretHash/ }, 'the event schema refuses a secret that is not a scrypt hash')
})

t.test('RevokeOAuthClient', async (t) => {
  const { given } = spec(t, oauthClient)
  const revoke = (workspaceId = ws): OAuthClientCommand => ({ type: 'RevokeOAuthClient', data: { clientId, workspaceId, now } })
  const state = given(registered()).when(revoke()).then([revoked], 'its workspace revokes it')
  t.match(state, { status: 'revoked', workspaceId: ws, createdAt: registeredAt }, 'a revoked client keeps its record')
  given().when(revoke()).thenRejects(NotFoundError, 'unknown client')
  given(registered(), revoked).when(revoke()).thenRejects(NotFoundError, 'already revoked')
  given(registered()).when(revoke(otherWs)).thenRejects(NotFoundError, 'a client of another workspace')
  examples(t, oauthClientStream, [['one stream per client', [clientId], `client-${clientId}`]])
})
