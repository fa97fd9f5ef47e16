import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { apiKey, authorizeIssue, type ApiKeyCommand, type ApiKeyEvent, type KeyActor } from '../../src/domain/api-key.js'
import { ConflictError, ForbiddenError, NotFoundError } from '../../src/errors.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const otherOrg = '0190a0b0-0000-7000-8000-000000000002'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const keyId = '0190a0b0-0000-7000-8000-000000000101'
const now = '2026-01-02T03:04:05.678Z'

const issued = (overrides: Partial<Extract<ApiKeyEvent, { type: 'ApiKeyIssued' }>['data']> = {}): ApiKeyEvent => ({
  type: 'ApiKeyIssued',
  data: {
    apiKeyId: keyId,
    organizationId: org,
    workspaceId: ws,
    name: 'ci',
    role: 'workspace',
    keyHash: 'a'.repeat(64),
    keyPrefix: 'wh_abcdefg',
    callbackUrl: 'https://hooks.example.com/a',
    signingSecret: 'whsec_x',
    issuedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  },
})
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { apiKeyId: keyId, revokedAt: now } }

const actor = (overrides: Partial<KeyActor> = {}): KeyActor => ({
  apiKeyId: '0190a0b0-0000-7000-8000-000000000999',
  organizationId: org,
  workspaceId: ws,
  role: 'organization-admin',
  ...overrides,
})

/** given(events).when(command): the events decided, each checked against its schema. */
const given = (...history: ApiKeyEvent[]) => ({
  when(command: ApiKeyCommand): ApiKeyEvent[] {
    const state = history.reduce(apiKey.evolve, apiKey.initialState)
    const events = apiKey.decide(command, state)
    for (const event of events) {
      const check = TypeCompiler.Compile(apiKey.eventSchemas[event.type])
      if (!check.Check(event.data)) throw new Error(`${event.type} breaks its schema: ${check.Errors(event.data).First()?.message}`)
    }
    return events
  },
})

t.test('IssueApiKey', async (t) => {
  const { data } = issued() as Extract<ApiKeyEvent, { type: 'ApiKeyIssued' }>
  const { issuedAt: _issuedAt, ...rest } = data
  t.same(given().when({ type: 'IssueApiKey', data: { ...rest, now } }), [issued({ issuedAt: now })])
  t.throws(() => given(issued()).when({ type: 'IssueApiKey', data: { ...rest, now } }), ConflictError, 'the same id twice')
})

t.test('ChangeApiKey', async (t) => {
  const change = (data: Partial<Extract<ApiKeyCommand, { type: 'ChangeApiKey' }>['data']>): ApiKeyCommand => ({
    type: 'ChangeApiKey',
    data: { apiKeyId: keyId, now, ...data },
  })

  t.same(given(issued()).when(change({ name: 'deploys' })), [
    { type: 'ApiKeyChanged', data: { apiKeyId: keyId, name: 'deploys', callbackUrl: 'https://hooks.example.com/a', changedAt: now } },
  ], 'a new name keeps the callback')
  t.same(given(issued()).when(change({ callbackUrl: 'https://hooks.example.com/b' })), [
    { type: 'ApiKeyChanged', data: { apiKeyId: keyId, name: 'ci', callbackUrl: 'https://hooks.example.com/b', changedAt: now } },
  ], 'a new callback keeps the name')
  t.same(given(issued({ callbackUrl: null })).when(change({ callbackUrl: 'https://hooks.example.com/b' })).length, 1, 'a key without a callback gets one')

  t.same(given(issued()).when(change({})), [], 'nothing asked: nothing changes')
  t.same(given(issued()).when(change({ name: 'ci', callbackUrl: 'https://hooks.example.com/a' })), [], 'the same values: nothing changes')
  const afterChange: ApiKeyEvent = { type: 'ApiKeyChanged', data: { apiKeyId: keyId, name: 'deploys', callbackUrl: 'https://hooks.example.com/b', changedAt: now } }
  t.same(given(issued(), afterChange).when(change({ name: 'deploys', callbackUrl: 'https://hooks.example.com/b' })), [], 'evolve applied the earlier change')

  t.throws(() => given().when(change({ name: 'x' })), NotFoundError, 'unknown key')
  t.throws(() => given(issued(), revoked).when(change({ name: 'x' })), NotFoundError, 'revoked key')

  t.equal(given(issued()).when(change({ name: 'x', by: actor({ workspaceId: otherWs }) })).length, 1, 'an admin reaches every workspace of its organization')
  t.equal(given(issued()).when(change({ name: 'x', by: actor({ role: 'workspace' }) })).length, 1, 'a workspace key reaches workspace keys of its workspace')
  t.throws(() => given(issued()).when(change({ name: 'x', by: actor({ organizationId: otherOrg }) })), NotFoundError, 'an admin of another organization')
  t.throws(() => given(issued()).when(change({ name: 'x', by: actor({ role: 'workspace', workspaceId: otherWs }) })), NotFoundError, 'a workspace key of another workspace')
  t.throws(
    () => given(issued({ role: 'organization-admin' })).when(change({ name: 'x', by: actor({ role: 'workspace' }) })),
    NotFoundError,
    'a workspace key never reaches an admin key, even in its own workspace',
  )
})

t.test('RevokeApiKey', async (t) => {
  const revoke = (by?: KeyActor): ApiKeyCommand => ({ type: 'RevokeApiKey', data: { apiKeyId: keyId, by, now } })

  t.same(given(issued()).when(revoke()), [revoked], 'the operator revokes')
  t.same(given(issued()).when(revoke(actor({ role: 'workspace' }))), [revoked], 'a sibling workspace key revokes')
  t.throws(() => given().when(revoke()), NotFoundError, 'unknown key')
  t.throws(() => given(issued(), revoked).when(revoke()), NotFoundError, 'already revoked')
  t.throws(() => given(issued()).when(revoke(actor({ organizationId: otherOrg }))), NotFoundError, 'outside the actor\'s reach')
  t.throws(() => given(issued()).when(revoke(actor({ apiKeyId: keyId, role: 'workspace' }))), ConflictError, 'a key cannot revoke itself')
  t.throws(() => given(issued({ role: 'organization-admin' })).when(revoke(actor({ apiKeyId: keyId }))), ConflictError, 'nor can an admin key')
})

t.test('authorizeIssue', async (t) => {
  const workspaceKey = actor({ role: 'workspace' })
  t.doesNotThrow(() => authorizeIssue(workspaceKey, { workspaceId: ws, role: 'workspace' }, org), 'a workspace key for its own workspace')
  t.throws(() => authorizeIssue(workspaceKey, { workspaceId: otherWs, role: 'workspace' }, org), ForbiddenError, 'a workspace key for a sibling workspace')
  for (const organizationOfTarget of [otherOrg, undefined]) {
    t.throws(
      () => authorizeIssue(workspaceKey, { workspaceId: otherWs, role: 'workspace' }, organizationOfTarget),
      ForbiddenError,
      `403 whatever the target is (${organizationOfTarget ?? 'no such workspace'}): nothing leaks`,
    )
  }
  t.throws(() => authorizeIssue(workspaceKey, { workspaceId: ws, role: 'organization-admin' }, org), ForbiddenError, 'a workspace key cannot mint admin keys')

  const admin = actor()
  t.doesNotThrow(() => authorizeIssue(admin, { workspaceId: otherWs, role: 'organization-admin' }, org), 'an admin for any workspace of its organization')
  t.throws(() => authorizeIssue(admin, { workspaceId: otherWs, role: 'workspace' }, otherOrg), NotFoundError, 'a workspace of another organization')
  t.throws(() => authorizeIssue(admin, { workspaceId: otherWs, role: 'workspace' }, undefined), NotFoundError, 'no such workspace')
})

t.test('evolve', async (t) => {
  t.same(apiKey.evolve(apiKey.initialState, revoked), { status: 'none' }, 'a revocation without an issue leaves nothing')
  t.match(apiKey.evolve(apiKey.evolve(apiKey.initialState, issued()), revoked), { status: 'revoked', name: 'ci', createdAt: '2026-01-01T00:00:00.000Z' })
})
