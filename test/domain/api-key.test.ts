import t from 'tap'
import { apiKey, apiKeyStream, authorizeIssue, canManage, type ApiKeyCommand, type ApiKeyEvent, type KeyActor } from '../../src/domain/api-key.js'
import { ConflictError, ForbiddenError, NotFoundError } from '../../src/errors.js'
import { examples, rejects, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const otherOrg = '0190a0b0-0000-7000-8000-000000000002'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const keyId = '0190a0b0-0000-7000-8000-000000000101'
const issuedAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

type Issued = Extract<ApiKeyEvent, { type: 'ApiKeyIssued' }>['data']
const issued = (overrides: Partial<Issued> = {}): ApiKeyEvent => ({
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
    issuedAt,
    ...overrides,
  },
})
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { apiKeyId: keyId, revokedAt: now } }
const changed = (name: string, callbackUrl: string | null): ApiKeyEvent => ({ type: 'ApiKeyChanged', data: { apiKeyId: keyId, name, callbackUrl, changedAt: now } })

const actor = (overrides: Partial<KeyActor> = {}): KeyActor => ({
  apiKeyId: '0190a0b0-0000-7000-8000-000000000999',
  organizationId: org,
  workspaceId: ws,
  role: 'organization-admin',
  ...overrides,
})

t.test('IssueApiKey', async (t) => {
  const { given } = spec(t, apiKey)
  const { issuedAt: _issuedAt, ...rest } = issued().data as Issued
  const issue: ApiKeyCommand = { type: 'IssueApiKey', data: { ...rest, now } }
  given().when(issue).then([issued({ issuedAt: now })], 'a new key, issued now')
  given(issued()).when(issue).thenRejects(ConflictError, 'the same id twice')
  given(revoked).when(issue).then([issued({ issuedAt: now })], 'a revocation without an issue leaves nothing behind')
  given().when({ type: 'IssueApiKey', data: { ...rest, keyHash: 'the-key-itself', now } }).thenRejects(/keyHash/, 'the event schema refuses anything but a SHA-256 hash')
})

t.test('ChangeApiKey', async (t) => {
  const { given } = spec(t, apiKey)
  const change = (data: Partial<Extract<ApiKeyCommand, { type: 'ChangeApiKey' }>['data']>): ApiKeyCommand => ({
    type: 'ChangeApiKey',
    data: { apiKeyId: keyId, now, ...data },
  })

  given(issued()).when(change({ name: 'deploys' })).then([changed('deploys', 'https://hooks.example.com/a')], 'a new name keeps the callback')
  given(issued()).when(change({ callbackUrl: 'https://hooks.example.com/b' })).then([changed('ci', 'https://hooks.example.com/b')], 'a new callback keeps the name')
  given(issued({ callbackUrl: null })).when(change({ callbackUrl: 'https://hooks.example.com/b' })).then([changed('ci', 'https://hooks.example.com/b')], 'a key without a callback gets one')

  given(issued()).when(change({})).thenNothing('nothing asked: nothing changes')
  given(issued()).when(change({ name: 'ci', callbackUrl: 'https://hooks.example.com/a' })).thenNothing('the same values: nothing changes')
  given(issued(), changed('deploys', 'https://hooks.example.com/b')).when(change({ name: 'deploys', callbackUrl: 'https://hooks.example.com/b' })).thenNothing('evolve applied the earlier change')

  given().when(change({ name: 'x' })).thenRejects(NotFoundError, 'unknown key')
  given(issued(), revoked).when(change({ name: 'x' })).thenRejects(NotFoundError, 'revoked key')

  given(issued()).when(change({ name: 'x', by: actor({ workspaceId: otherWs }) })).then([changed('x', 'https://hooks.example.com/a')], 'an admin reaches every workspace of its organization')
  given(issued()).when(change({ name: 'x', by: actor({ role: 'workspace' }) })).then([changed('x', 'https://hooks.example.com/a')], 'a workspace key reaches workspace keys of its workspace')
  given(issued()).when(change({ name: 'x', by: actor({ organizationId: otherOrg }) })).thenRejects(NotFoundError, 'an admin of another organization')
  given(issued()).when(change({ name: 'x', by: actor({ role: 'workspace', workspaceId: otherWs }) })).thenRejects(NotFoundError, 'a workspace key of another workspace')
  given(issued({ role: 'organization-admin' })).when(change({ name: 'x', by: actor({ role: 'workspace' }) })).thenRejects(
    NotFoundError,
    'a workspace key never reaches an admin key, even in its own workspace',
  )
})

t.test('RevokeApiKey', async (t) => {
  const { given } = spec(t, apiKey)
  const revoke = (by?: KeyActor): ApiKeyCommand => ({ type: 'RevokeApiKey', data: { apiKeyId: keyId, by, now } })

  const state = given(issued()).when(revoke()).then([revoked], 'the operator revokes')
  t.match(state, { status: 'revoked', name: 'ci', createdAt: issuedAt }, 'a revoked key keeps its record')
  given(issued()).when(revoke(actor({ role: 'workspace' }))).then([revoked], 'a sibling workspace key revokes')
  given().when(revoke()).thenRejects(NotFoundError, 'unknown key')
  given(issued(), revoked).when(revoke()).thenRejects(NotFoundError, 'already revoked')
  given(issued()).when(revoke(actor({ organizationId: otherOrg }))).thenRejects(NotFoundError, 'outside the actor\'s reach')
  given(issued()).when(revoke(actor({ apiKeyId: keyId, role: 'workspace' }))).thenRejects(ConflictError, 'a key cannot revoke itself')
  given(issued({ role: 'organization-admin' })).when(revoke(actor({ apiKeyId: keyId }))).thenRejects(ConflictError, 'nor can an admin key')
})

t.test('authorizeIssue', async (t) => {
  const workspaceKey = actor({ role: 'workspace' })
  const admin = actor()
  examples(t, authorizeIssue, [
    ['a workspace key for its own workspace', [workspaceKey, { workspaceId: ws, role: 'workspace' }, org], undefined],
    ['a workspace key for a sibling workspace', [workspaceKey, { workspaceId: otherWs, role: 'workspace' }, org], rejects(ForbiddenError)],
    ['a workspace key for a workspace of another organization: 403, nothing leaks', [workspaceKey, { workspaceId: otherWs, role: 'workspace' }, otherOrg], rejects(ForbiddenError)],
    ['a workspace key for no such workspace: 403, nothing leaks', [workspaceKey, { workspaceId: otherWs, role: 'workspace' }, undefined], rejects(ForbiddenError)],
    ['a workspace key cannot mint admin keys', [workspaceKey, { workspaceId: ws, role: 'organization-admin' }, org], rejects(ForbiddenError)],
    ['an admin for any workspace of its organization', [admin, { workspaceId: otherWs, role: 'organization-admin' }, org], undefined],
    ['an admin for a workspace of another organization', [admin, { workspaceId: otherWs, role: 'workspace' }, otherOrg], rejects(NotFoundError)],
    ['an admin for no such workspace', [admin, { workspaceId: otherWs, role: 'workspace' }, undefined], rejects(NotFoundError)],
  ])
})

t.test('canManage', async (t) => {
  const key = { organizationId: org, workspaceId: ws, role: 'workspace' as const }
  examples(t, canManage, [
    ['an admin, a key of its organization', [actor({ workspaceId: otherWs }), key], true],
    ['an admin, a key of another organization', [actor({ organizationId: otherOrg }), key], false],
    ['a workspace key, a workspace key of its workspace', [actor({ role: 'workspace' }), key], true],
    ['a workspace key, a key of a sibling workspace', [actor({ role: 'workspace', workspaceId: otherWs }), key], false],
    ['a workspace key, an admin key of its own workspace', [actor({ role: 'workspace' }), { ...key, role: 'organization-admin' }], false],
  ])
  examples(t, apiKeyStream, [['one stream per key', [keyId], `apikey-${keyId}`]])
})
