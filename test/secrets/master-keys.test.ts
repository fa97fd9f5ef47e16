import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { masterKey } from '../../src/secrets/cipher.js'
import { loadMasterKeys, SECRETS_KEY_FILE } from '../../src/secrets/master-keys.js'

const dataDirOf = async (t: Test) => {
  const dir = await mkdtemp(join(tmpdir(), 'flowd-secrets-key-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return join(dir, 'nested')
}

t.test('SECRETS_KEY and SECRETS_KEY_PREVIOUS are the base64 of 32 bytes, and an error never shows them', async (t) => {
  const short = randomBytes(31).toString('base64')
  const error = t.throws(() => loadConfig({ SECRETS_KEY: short, SECRETS_KEY_PREVIOUS: 'not base64 at all!' }), ConfigError) as ConfigError
  t.same(error.problems, [
    'SECRETS_KEY: must be the base64 of exactly 32 bytes (e.g. openssl rand -base64 32)',
    'SECRETS_KEY_PREVIOUS: must be the base64 of exactly 32 bytes (e.g. openssl rand -base64 32)',
  ])
  t.notOk(error.message.includes(short))
  const key = randomBytes(32)
  t.equal(loadConfig({ SECRETS_KEY: key.toString('base64') }).secretsKey, key.toString('base64'))
  t.equal(loadConfig({ SECRETS_KEY: key.toString('base64url') }).secretsKey, key.toString('base64url'), 'base64url too')
  t.match(t.throws(() => loadConfig({ SECRETS_KEY: key.toString('base64'), SECRETS_KEY_PREVIOUS: key.toString('base64') }), ConfigError), { problems: [/the same key as SECRETS_KEY/] })
  t.match(loadConfig({}), { secretsKey: undefined, secretsKeyPrevious: undefined })
})

t.test('the configured keys are used, and nothing is written', async (t) => {
  const dataDir = await dataDirOf(t)
  const current = randomBytes(32)
  const previous = randomBytes(32)
  const keys = await loadMasterKeys({ secretsKey: current.toString('base64'), secretsKeyPrevious: previous.toString('base64'), dataDir })
  t.same(keys, { current: masterKey(current), previous: masterKey(previous), source: 'SECRETS_KEY' })
  await t.rejects(stat(dataDir), { code: 'ENOENT' })
})

t.test('without SECRETS_KEY, a key is generated once in DATA_DIR (mode 0600) and reused', async (t) => {
  const dataDir = await dataDirOf(t)
  const config = { secretsKey: undefined, secretsKeyPrevious: undefined, dataDir }
  const loaded = await Promise.all(Array.from({ length: 5 }, () => loadMasterKeys(config)))
  const file = join(dataDir, SECRETS_KEY_FILE)
  t.equal((await stat(file)).mode & 0o777, 0o600)
  t.ok(loaded.every((keys) => keys.current.id === loaded[0]!.current.id), 'processes starting together agree')
  t.equal(loaded[0]!.source, 'DATA_DIR')
  t.same(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'), loaded[0]!.current.key, 'the file holds the key, base64')
  t.same((await loadMasterKeys(config)).current, loaded[0]!.current, 'a restart reuses it')

  await writeFile(file, 'short\n')
  await t.rejects(loadMasterKeys(config), /is not the base64 of 32 bytes: restore it from a backup/, 'a damaged file is not replaced: the secrets are sealed under it')
})
