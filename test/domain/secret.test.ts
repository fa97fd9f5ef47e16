import t from 'tap'
import { MAX_SECRETS_PER_WORKSPACE, SECRET_NAME_PATTERN, secretNamed, secrets, secretsStream, type SecretCommand, type SecretEvent } from '../../src/domain/secret.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, fold, spec } from '../helpers/decider-spec.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const key1 = '0190a0b0-0000-7000-8000-000000000a01'
const key2 = '0190a0b0-0000-7000-8000-000000000a02'
const setAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'
const sealed = { iv: 'AAAAAAAAAAAAAAAA', tag: 'BBBBBBBBBBBBBBBBBBBBBB', ciphertext: 'Q0lQSEVS' }

const setSecret = (data: Partial<Extract<SecretCommand, { type: 'SetSecret' }>['data']> = {}): SecretCommand => ({
  type: 'SetSecret',
  data: { workspaceId: ws, name: 'shop', keyId: key1, ...sealed, now: setAt, ...data },
})
const secretSet = (data: Partial<Extract<SecretEvent, { type: 'SecretSet' }>['data']> = {}): SecretEvent => ({
  type: 'SecretSet',
  data: { workspaceId: ws, name: 'shop', keyId: key1, ...sealed, setAt, ...data },
})
const deleteSecret = (name = 'shop'): SecretCommand => ({ type: 'DeleteSecret', data: { workspaceId: ws, name, now } })
const deleted = (keyId = key1, name = 'shop'): SecretEvent => ({ type: 'SecretDeleted', data: { workspaceId: ws, name, keyId, deletedAt: now } })

const keyOf = (i: number) => `0190a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`
/** `count` secrets named s0, s1, …, each with a key of its own. */
const many = (count: number): SecretEvent[] => Array.from({ length: count }, (_, i) => secretSet({ name: `s${i}`, keyId: keyOf(i) }))

t.test('SetSecret', async (t) => {
  const { given } = spec(t, secrets)
  const created = given().when(setSecret()).then([secretSet()], 'a new name')
  t.same(created, { byName: { shop: { name: 'shop', keyId: key1, ...sealed, createdAt: setAt, updatedAt: setAt } }, retiredKeyId: null, version: 1 }, 'nothing retired by a new name')
  const replaced = given(secretSet()).when(setSecret({ keyId: key2, now })).then([secretSet({ keyId: key2, setAt: now })], 'a new value under a new key')
  t.same(secretNamed(replaced, 'shop'), { name: 'shop', keyId: key2, ...sealed, createdAt: setAt, updatedAt: now }, 'created when first set, updated now')
  t.equal(replaced.retiredKeyId, key1, "the replaced value's key is retired")
  given(secretSet()).when(setSecret()).thenNothing('the same key again: a repeat')
  given(...many(MAX_SECRETS_PER_WORKSPACE)).when(setSecret()).thenRejects({ type: ConflictError, message: /holds 100 secrets, the most it may/ }, 'one more name than the limit')
  given(...many(MAX_SECRETS_PER_WORKSPACE)).when(setSecret({ name: 's7', keyId: key2 })).then([secretSet({ name: 's7', keyId: key2 })], 'at the limit, a value may still be replaced')
  given(...many(MAX_SECRETS_PER_WORKSPACE), deleted(keyOf(0), 's0')).when(setSecret()).then([secretSet()], 'a deletion frees a place')
  given().when(setSecret({ name: 'has-dash' })).thenRejects(/name/, 'the event schema wants a name flows can write')
  given().when(setSecret({ ciphertext: 'not base64!' })).thenRejects(/ciphertext/, 'the ciphertext is base64url')
  const proto = given().when(setSecret({ name: '__proto__' })).then([secretSet({ name: '__proto__' })], '__proto__ is a name like any other')
  t.same(Object.keys(proto.byName), ['__proto__'], 'kept as an own name')
  t.equal(secretNamed(fold(secrets, []), '__proto__'), undefined, 'and absent where it was never set')
})

t.test('DeleteSecret', async (t) => {
  const { given } = spec(t, secrets)
  const state = given(secretSet(), secretSet({ name: 'crm', keyId: key2 })).when(deleteSecret()).then([deleted()], 'the deletion names the key it shreds')
  t.same(Object.keys(state.byName), ['crm'], 'the others stay')
  t.equal(state.retiredKeyId, key1)
  t.equal(state.version, 3, 'one version per event')
  given(secretSet(), secretSet({ keyId: key2 })).when(deleteSecret()).then([deleted(key2)], 'the key of the current value')
  given(secretSet(), deleted()).when(deleteSecret()).thenRejects({ type: NotFoundError, message: /^no secret named "shop" in this workspace$/ }, 'deleted already')
  given().when(deleteSecret('__proto__')).thenRejects(NotFoundError, 'a name never set, whatever it is')
})

t.test('names and the stream', async (t) => {
  const matches = (name: string) => SECRET_NAME_PATTERN.test(name)
  examples(t, matches, [
    ['letters, digits and _', ['Shop_API_2'], true],
    ['64 characters', ['a'.repeat(64)], true],
    ['65 characters', ['a'.repeat(65)], false],
    ['empty', [''], false],
    ['a dash', ['shop-key'], false],
    ['a dot', ['shop.key'], false],
    ['a line break at the end', ['shop\n'], false],
  ])
  examples(t, secretsStream, [['one stream for all secrets of a workspace', [ws], `secrets-${ws}`]])
})
