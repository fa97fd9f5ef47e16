import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import t from 'tap'
import { masterKey } from '../../src/secrets/cipher.js'
import { SecretKeyring } from '../../src/secrets/keyring.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath, cliStore, runCli, runCliInOneProcess } from '../helpers/cli.js'

// `flowd secrets rewrap`: the rotation of the master key that wraps the data keys of workspace
// secrets. `secrets` alone and `secrets --help` are test/cli/usage.test.ts's.

if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)

const ws = '0190a0b0-0000-7000-8000-000000000011'

t.test('usage errors', async (t) => {
  const key = randomBytes(32).toString('base64')
  const cases = [
    [['secrets', 'rotate'], {}],
    [['secrets', 'rewrap'], { SECRETS_KEY: key }],
    [['secrets', 'rewrap'], { SECRETS_KEY_PREVIOUS: key }],
    [['secrets', 'rewrap', 'now'], { SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: randomBytes(32).toString('base64') }],
  ] as const
  // A database nothing listens on: refused before it is opened, so with 2 rather than 1; and so in one process.
  const results = await runCliInOneProcess(cases.map(([args, env]) => ({ args: [...args], env: { DATABASE_URL: 'postgres://flowd@127.0.0.1:1/unreachable', ...env } })))
  cases.forEach(([args, env], i) => {
    const result = results[i]!
    t.equal(result.code, 2, `flowd ${args.join(' ')} with ${Object.keys(env).join(', ') || 'no key'}: ${assertionMessage(result.stderr.split('\n')[0])}`)
  })
})

t.test('rewrap moves every key from SECRETS_KEY_PREVIOUS to SECRETS_KEY; one it cannot unwrap fails the run, named', async (t) => {
  const store = await cliStore(t)
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  let storage = await store.open()
  const before = new SecretKeyring(storage.db, { current: masterKey(oldKey), previous: undefined, source: 'SECRETS_KEY' })
  const issued = [await before.issue(ws, 'shop'), await before.issue(ws, 'crm')]
  await storage.close()

  const env = { ...store.env, SECRETS_KEY: newKey.toString('base64'), SECRETS_KEY_PREVIOUS: oldKey.toString('base64') }
  const result = await runCli(['secrets', 'rewrap', '--json'], env)
  t.equal(result.code, 0, assertionMessage(result.stderr))
  t.same(JSON.parse(result.stdout), { masterKeyId: masterKey(newKey).id, rewrapped: 2, unknown: [], broken: [] })

  storage = await store.open()
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
