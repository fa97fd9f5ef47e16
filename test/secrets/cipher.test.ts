import { randomBytes } from 'node:crypto'
import t from 'tap'
import { KEY_BYTES, SealBrokenError, masterKey, newDataKey, open, seal, unwrapKey, valueContext, wrapKey } from '../../src/secrets/cipher.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const keyId = '0190a0b0-0000-7000-8000-000000000a01'
const value = 'sk_live_ünïcödé_🔑'

t.test('a sealed value opens with its key and context, and shows nothing of the value', async (t) => {
  const key = newDataKey()
  t.equal(key.length, KEY_BYTES)
  const context = valueContext(ws, 'shop', keyId)
  const sealed = seal(key, Buffer.from(value), context)
  t.same(Object.keys(sealed).sort(), ['ciphertext', 'iv', 'tag'])
  for (const part of Object.values(sealed)) t.match(part, /^[A-Za-z0-9_-]+$/, 'base64url')
  t.equal(Buffer.from(sealed.iv, 'base64url').length, 12, 'a 96-bit nonce')
  t.equal(Buffer.from(sealed.tag, 'base64url').length, 16, 'a 128-bit tag')
  t.equal(Buffer.from(sealed.ciphertext, 'base64url').length, Buffer.byteLength(value), 'as long as the value')
  t.notOk(JSON.stringify(sealed).includes('sk_live'), 'the value is not in the seal')
  t.equal(open(key, sealed, context).toString('utf8'), value)

  const again = seal(key, Buffer.from(value), context)
  t.not(again.iv, sealed.iv, 'a fresh nonce every time')
  t.not(again.ciphertext, sealed.ciphertext, 'so the same value seals differently')
})

t.test('a seal does not open with another key, another context, or a changed byte', async (t) => {
  const key = newDataKey()
  const context = valueContext(ws, 'shop', keyId)
  const sealed = seal(key, Buffer.from(value), context)
  const flip = (text: string) => {
    const bytes = Buffer.from(text, 'base64url')
    bytes.writeUInt8(bytes.readUInt8(0) ^ 1, 0)
    return bytes.toString('base64url')
  }
  t.throws(() => open(newDataKey(), sealed, context), SealBrokenError, 'another key')
  t.throws(() => open(key, sealed, valueContext(ws, 'crm', keyId)), SealBrokenError, 'moved to another name')
  t.throws(() => open(key, sealed, valueContext('0190a0b0-0000-7000-8000-000000000012', 'shop', keyId)), SealBrokenError, 'moved to another workspace')
  t.throws(() => open(key, { ...sealed, ciphertext: flip(sealed.ciphertext) }, context), SealBrokenError, 'a changed ciphertext')
  t.throws(() => open(key, { ...sealed, tag: flip(sealed.tag) }, context), SealBrokenError, 'a changed tag')
  t.throws(() => open(key, { ...sealed, iv: sealed.iv.slice(2) }, context), SealBrokenError, 'a nonce of another length')
})

t.test('a data key wrapped by a master key unwraps with it, for its own row only', async (t) => {
  const master = masterKey(randomBytes(32))
  const dataKey = newDataKey()
  const wrapped = wrapKey(master, keyId, dataKey)
  t.match(wrapped, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'nonce, tag and key, dot-separated')
  t.notOk(wrapped.includes(dataKey.toString('base64url')), 'the key is not in the wrapping')
  t.same(unwrapKey(master, keyId, wrapped), dataKey)
  t.throws(() => unwrapKey(masterKey(randomBytes(32)), keyId, wrapped), SealBrokenError, 'another master key')
  t.throws(() => unwrapKey(master, '0190a0b0-0000-7000-8000-000000000a02', wrapped), SealBrokenError, "another row's id")
  t.throws(() => unwrapKey(master, keyId, 'garbage'), SealBrokenError, 'not a wrapping')
})

t.test("a master key's fingerprint is short, stable, and tells keys apart", async (t) => {
  const bytes = randomBytes(32)
  const master = masterKey(bytes)
  t.match(master.id, /^[0-9a-f]{16}$/)
  t.equal(masterKey(Buffer.from(bytes)).id, master.id, 'the same key, the same fingerprint')
  t.not(masterKey(randomBytes(32)).id, master.id)
  t.notOk(bytes.toString('hex').includes(master.id), 'not a piece of the key')
  t.throws(() => masterKey(randomBytes(16)), /32 bytes, got 16/)
})
