import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { oauthClient, type OAuthClientCommand, type OAuthClientEvent } from '../../src/domain/oauth-client.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const clientId = '0190a0b0-0000-7000-8000-000000000201'
const now = '2026-01-02T03:04:05.678Z'
const secretHash = 'scrypt$32768$8$1$c2FsdA$aGFzaA'

const registered: OAuthClientEvent = {
  type: 'OAuthClientRegistered',
  data: { clientId, organizationId: org, workspaceId: ws, name: 'Portal', secretHash, registeredAt: '2026-01-01T00:00:00.000Z' },
}
const revoked: OAuthClientEvent = { type: 'OAuthClientRevoked', data: { clientId, revokedAt: now } }

const given = (...history: OAuthClientEvent[]) => ({
  when(command: OAuthClientCommand): OAuthClientEvent[] {
    const events = oauthClient.decide(command, history.reduce(oauthClient.evolve, oauthClient.initialState))
    for (const event of events) {
      const check = TypeCompiler.Compile(oauthClient.eventSchemas[event.type])
      if (!check.Check(event.data)) throw new Error(`${event.type} breaks its schema: ${check.Errors(event.data).First()?.message}`)
    }
    return events
  },
})

t.test('RegisterOAuthClient', async (t) => {
  const register: OAuthClientCommand = { type: 'RegisterOAuthClient', data: { clientId, organizationId: org, workspaceId: ws, name: 'Portal', secretHash, now } }
  t.same(given().when(register), [{ ...registered, data: { ...registered.data, registeredAt: now } }])
  t.throws(() => given(registered).when(register), ConflictError, 'the same id twice')
  t.throws(() => given().when({ ...register, data: { ...register.data, secretHash: 'plain' } }), /breaks its schema: .*scrypt/, 'the event schema refuses a secret that is not a scrypt hash')
})

t.test('RevokeOAuthClient', async (t) => {
  const revoke = (workspaceId = ws): OAuthClientCommand => ({ type: 'RevokeOAuthClient', data: { clientId, workspaceId, now } })
  t.same(given(registered).when(revoke()), [revoked])
  t.throws(() => given().when(revoke()), NotFoundError, 'unknown client')
  t.throws(() => given(registered, revoked).when(revoke()), NotFoundError, 'already revoked')
  t.throws(() => given(registered).when(revoke(otherWs)), NotFoundError, 'a client of another workspace')
})

t.test('evolve', async (t) => {
  t.same(oauthClient.evolve(oauthClient.initialState, revoked), { status: 'none' })
  t.match(oauthClient.evolve(oauthClient.evolve(oauthClient.initialState, registered), revoked), { status: 'revoked', workspaceId: ws, createdAt: '2026-01-01T00:00:00.000Z' })
})
