import t from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliStore, runCli, startService, tempDir } from '../helpers/cli.js'
import { migratedDataDir } from '../helpers/pglite-template.js'

// A default key is made by a start on the embedded store only: the first two tests keep to it.

t.test('npm start on an empty embedded store prints a first key that works, and stops cleanly on SIGTERM', async (t) => {
  const service = await startService(t, { DATA_DIR: tempDir(t) })
  const apiKey = /X-Api-Key\s+(wh_[A-Za-z0-9_-]{43})/.exec(service.output())?.[1]
  t.ok(apiKey, 'the banner shows the key')
  t.match(service.output(), new RegExp(`API\\s+${service.baseUrl}/v1`), 'and where the API is')
  t.equal((await fetch(`${service.baseUrl}/healthz`)).status, 200)
  const response = await fetch(`${service.baseUrl}/v1/workspaces`, { headers: { 'x-api-key': apiKey! } })
  t.equal(response.status, 200)
  t.match(await response.json(), { content: [{ name: 'Default workspace' }], totalElements: 1 })
  t.equal(await service.stop(), 0, 'exits 0 after SIGTERM')
})

// The start here is a restart as far as the store goes: what it holds was written by another
// process (`flowd bootstrap`), so a key surviving a restart and a second start making no second key
// are proved by the same start as a bootstrapped store getting no default key.
t.test('flowd bootstrap --json prints exactly one JSON object with the new key; a start after it makes no other', async (t) => {
  const dataDir = await migratedDataDir(t)
  const result = await runCli(['bootstrap', '--organization', 'Acme', '--workspace', 'Support', '--callback-url', 'https://hooks.example.com/flow', '--json'], { DATA_DIR: dataDir })
  t.equal(result.code, 0, assertionMessage(result.stderr))
  const lines = result.stdout.trim().split('\n')
  t.equal(lines.length, 1)
  const created = JSON.parse(lines[0]!)
  t.same(Object.keys(created).sort(), ['apiKey', 'apiKeyId', 'organizationId', 'signingSecret', 'workspaceId'])
  t.match(created.apiKey, /^wh_[A-Za-z0-9_-]{43}$/)
  t.match(created.signingSecret, /^whsec_/)

  const service = await startService(t, { DATA_DIR: dataDir })
  const list = (await fetch(`${service.baseUrl}/v1/workspaces`, { headers: { 'x-api-key': created.apiKey } }).then((r) => r.json())) as { content: { id: string; name: string }[] }
  t.same(list.content.map((w) => [w.id, w.name]), [[created.workspaceId, 'Support']], 'the key made before the start works after it')
  t.notMatch(service.output(), /X-Api-Key/, 'a store with an organization gets no default key')
  t.match(service.output(), /API keys: the admin key printed at the first start/, 'and points at the one there is, not at making a first')

  const busy = await runCli(['bootstrap', '--organization', 'B', '--workspace', 'B'], { DATA_DIR: dataDir })
  t.equal(busy.code, 1, 'the embedded store is locked while the service runs')
  t.match(busy.stderr, /in use by process \d+/)
  t.equal(await service.stop(), 0)
})

t.test('flowd bootstrap refuses bad input with exit code 2', async (t) => {
  const { env } = await cliStore(t)
  const missing = await runCli(['bootstrap', '--organization', 'Acme'], env)
  t.equal(missing.code, 2)
  t.match(missing.stderr, /--organization and --workspace are required/)
  const privateCallback = await runCli(['bootstrap', '--organization', 'A', '--workspace', 'W', '--callback-url', 'https://10.0.0.1/hook'], env)
  t.equal(privateCallback.code, 2)
  t.match(privateCallback.stderr, /non-public address/)
})
