import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadEditorSigningKey, SIGNING_SECRET_FILE } from '../../src/auth/signing-key.js'
import { ConfigError, loadConfig } from '../../src/config.js'

t.test('EDITOR_TOKEN_SECRET must be at least 32 bytes, and the error never shows it', async (t) => {
  const secret = 'x'.repeat(31)
  const error = t.throws(() => loadConfig({ EDITOR_TOKEN_SECRET: secret }), ConfigError) as ConfigError
  t.match(error.message, /EDITOR_TOKEN_SECRET: must be at least 32 bytes, got 31/)
  t.notOk(error.message.includes(secret))
  t.equal(loadConfig({ EDITOR_TOKEN_SECRET: 'y'.repeat(32) }).editorTokenSecret, 'y'.repeat(32))
  t.equal(loadConfig({}).editorTokenSecret, undefined)
})

t.test('the configured secret is the key, and nothing is written', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'flowd-key-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const key = await loadEditorSigningKey({ editorTokenSecret: 'z'.repeat(40), dataDir })
  t.same(Buffer.from(key).toString(), 'z'.repeat(40))
  await t.rejects(stat(join(dataDir, SIGNING_SECRET_FILE)), { code: 'ENOENT' })
})

t.test('without one, a secret is generated once in DATA_DIR (mode 0600) and reused', async (t) => {
  const dataDir = join(await mkdtemp(join(tmpdir(), 'flowd-key-')), 'nested')
  t.teardown(() => rm(join(dataDir, '..'), { recursive: true, force: true }))
  const keys = await Promise.all(Array.from({ length: 5 }, () => loadEditorSigningKey({ editorTokenSecret: undefined, dataDir })))
  const file = join(dataDir, SIGNING_SECRET_FILE)
  t.equal((await stat(file)).mode & 0o777, 0o600)
  t.ok(keys.every((k) => Buffer.from(k).equals(Buffer.from(keys[0]!))), 'processes starting together agree')
  t.ok(keys[0]!.length >= 32)
  t.same(await loadEditorSigningKey({ editorTokenSecret: undefined, dataDir }), keys[0], 'a restart reuses it')
  t.equal(Buffer.from(keys[0]!).toString(), (await readFile(file, 'utf8')).trim())

  await writeFile(file, 'short\n')
  await t.rejects(loadEditorSigningKey({ editorTokenSecret: undefined, dataDir }), /fewer than 32 bytes/)
})
