import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { masterKey } from '../../src/secrets/cipher.js'
import { SecretKeyring } from '../../src/secrets/keyring.js'
import { openStorage } from '../../src/store/connect.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath, runCli } from '../helpers/cli.js'
import { migratedDataDir } from '../helpers/pglite-template.js'

// `flowd secrets rewrap`: the rotation of the master key that wraps the data keys of workspace
// secrets, on the embedded database.

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

const ws = '0190a0b0-0000-7000-8000-000000000011'

t.test('usage errors', async (t) => {
  const dataDir = await migratedDataDir(t)
  const key = randomBytes(32).toString('base64')
  for (const [args, env] of [
    [['secrets'], {}],
    [['secrets', 'rotate'], {}],
    [['secrets', 'rewrap'], { SECRETS_KEY: key }],
    [['secrets', 'rewrap'], { SECRETS_KEY_PREVIOUS: key }],
    [['secrets', 'rewrap', 'now'], { SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: randomBytes(32).toString('base64') }],
  ] as const) {
    const result = await runCli([...args], { DATA_DIR: dataDir, ...env })
    t.equal(result.code, 2, `flowd ${args.join(' ')} with ${Object.keys(env).join(', ') || 'no key'}: ${assertionMessage(result.stderr.split('\n')[0])}`)
  }
  const help = await runCli(['secrets', '--help'], { DATA_DIR: dataDir })
  t.equal(help.code, 0)
  t.match(help.stdout, /flowd secrets rewrap/)
})

t.test('rewrap moves every key from SECRETS_KEY_PREVIOUS to SECRETS_KEY; one it cannot unwrap fails the run, named', async (t) => {
  const dataDir = await migratedDataDir(t)
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  const open = () => openStorage({ kind: 'pglite', dataDir: join(dataDir, 'pglite') })
  let storage = await open()
  const before = new SecretKeyring(storage.db, { current: masterKey(oldKey), previous: undefined, source: 'SECRETS_KEY' })
  const issued = [await before.issue(ws, 'shop'), await before.issue(ws, 'crm')]
  await storage.close()

  const env = { DATA_DIR: dataDir, SECRETS_KEY: newKey.toString('base64'), SECRETS_KEY_PREVIOUS: oldKey.toString('base64') }
  const result = await runCli(['secrets', 'rewrap', '--json'], env)
  t.equal(result.code, 0, assertionMessage(result.stderr))
  t.same(JSON.parse(result.stdout), { masterKeyId: masterKey(newKey).id, rewrapped: 2, unknown: [], broken: [] })

  storage = await open()
  const after = new SecretKeyring(storage.db, { current: masterKey(newKey), previous: undefined, source: 'SECRETS_KEY' })
  const unwrapped = await after.unwrap(ws, issued.map((key) => key.keyId))
  t.same(issued.map((key) => unwrapped.get(key.keyId)), issued.map((key) => key.key), 'the new key alone unwraps them, unchanged')
  const stray = new SecretKeyring(storage.db, { current: masterKey(randomBytes(32)), previous: undefined, source: 'SECRETS_KEY' })
  await stray.issue(ws, 'stray')
  await storage.close()

  const again = await runCli(['secrets', 'rewrap'], env)
  t.equal(again.code, 1, 'a key neither master key wraps fails the run')
  t.match(again.stdout, `re-wrapped 0 data keys with master key ${masterKey(newKey).id}`)
  t.match(again.stderr, `1 data keys are wrapped by master key ${stray.masterKeyId}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`)
  t.notOk(again.stderr.includes(newKey.toString('base64')) || again.stderr.includes(oldKey.toString('base64')), 'no key is printed')
})
