import { join } from 'node:path'
import t from 'tap'
import { allProjections } from '../../src/projections/index.js'
import { openStorage } from '../../src/store/connect.js'
import { runCli, startService, tempDir } from '../helpers/cli.js'

t.test('npm start on an empty embedded store prints a first key that works, and stops cleanly on SIGTERM', async (t) => {
  const dataDir = tempDir(t)
  const service = await startService(t, { DATA_DIR: dataDir })
  const apiKey = /X-Api-Key\s+(wh_[A-Za-z0-9_-]{43})/.exec(service.output())?.[1]
  t.ok(apiKey, 'the banner shows the key')
  t.match(service.output(), new RegExp(`API\\s+${service.baseUrl}/v1`), 'and where the API is')
  t.equal((await fetch(`${service.baseUrl}/healthz`)).status, 200)
  const response = await fetch(`${service.baseUrl}/v1/workspaces`, { headers: { 'x-api-key': apiKey! } })
  t.equal(response.status, 200)
  t.match(await response.json(), { content: [{ name: 'Default workspace' }], totalElements: 1 })
  t.equal(await service.stop(), 0, 'exits 0 after SIGTERM')

  const again = await startService(t, { DATA_DIR: dataDir })
  t.notMatch(again.output(), /X-Api-Key/, 'a second start creates no second key')
  t.equal((await fetch(`${again.baseUrl}/v1/workspaces`, { headers: { 'x-api-key': apiKey! } })).status, 200, 'the key survives a restart')
  t.equal(await again.stop(), 0)
})

t.test('flowd bootstrap --json prints exactly one JSON object with the new key', async (t) => {
  const dataDir = tempDir(t)
  const result = await runCli(['bootstrap', '--organization', 'Acme', '--workspace', 'Support', '--callback-url', 'https://hooks.example.com/flow', '--json'], { DATA_DIR: dataDir })
  t.equal(result.code, 0, result.stderr)
  const lines = result.stdout.trim().split('\n')
  t.equal(lines.length, 1)
  const created = JSON.parse(lines[0]!)
  t.same(Object.keys(created).sort(), ['apiKey', 'apiKeyId', 'organizationId', 'signingSecret', 'workspaceId'])
  t.match(created.apiKey, /^wh_[A-Za-z0-9_-]{43}$/)
  t.match(created.signingSecret, /^whsec_/)

  const service = await startService(t, { DATA_DIR: dataDir })
  const list = (await fetch(`${service.baseUrl}/v1/workspaces`, { headers: { 'x-api-key': created.apiKey } }).then((r) => r.json())) as { content: { id: string; name: string }[] }
  t.same(list.content.map((w) => [w.id, w.name]), [[created.workspaceId, 'Support']])
  t.notMatch(service.output(), /X-Api-Key/, 'a store with an organization gets no default key')

  const busy = await runCli(['bootstrap', '--organization', 'B', '--workspace', 'B'], { DATA_DIR: dataDir })
  t.equal(busy.code, 1, 'the embedded store is locked while the service runs')
  t.match(busy.stderr, /in use by process \d+/)
  t.equal(await service.stop(), 0)
})

t.test('flowd bootstrap refuses bad input with exit code 2', async (t) => {
  const dataDir = tempDir(t)
  const missing = await runCli(['bootstrap', '--organization', 'Acme'], { DATA_DIR: dataDir })
  t.equal(missing.code, 2)
  t.match(missing.stderr, /--organization and --workspace are required/)
  const privateCallback = await runCli(['bootstrap', '--organization', 'A', '--workspace', 'W', '--callback-url', 'https://10.0.0.1/hook'], { DATA_DIR: dataDir })
  t.equal(privateCallback.code, 2)
  t.match(privateCallback.stderr, /non-public address/)
})

t.test('flowd projections rebuild rebuilds each read model to the same rows', async (t) => {
  const dataDir = tempDir(t)
  t.equal((await runCli(['bootstrap', '--organization', 'A', '--workspace', 'W1', '--json'], { DATA_DIR: dataDir })).code, 0)
  t.equal((await runCli(['bootstrap', '--organization', 'B', '--workspace', 'W2', '--json'], { DATA_DIR: dataDir })).code, 0)
  const snapshot = async () => {
    const storage = await openStorage({ kind: 'pglite', dataDir: join(dataDir, 'pglite') })
    try {
      return {
        organizations: await storage.db.selectFrom('organizations').selectAll().orderBy('id').execute(),
        workspaces: await storage.db.selectFrom('workspaces').selectAll().orderBy('id').execute(),
        apiKeys: await storage.db.selectFrom('api_keys').selectAll().orderBy('id').execute(),
      }
    } finally {
      await storage.close()
    }
  }
  const before = await snapshot()
  t.equal(before.workspaces.length, 2)
  const rebuilt = await runCli(['projections', 'rebuild'], { DATA_DIR: dataDir })
  t.equal(rebuilt.code, 0, rebuilt.stderr)
  t.match(rebuilt.stdout, /organizations: rebuilt from 2 events/)
  t.match(rebuilt.stdout, /workspaces: rebuilt from 2 events/)
  t.match(rebuilt.stdout, /api-keys: rebuilt from 2 events/)
  t.match(rebuilt.stderr, /^workspaces +\[█+\] 2\/2 events/m, 'each read model ends with a full bar, named')
  t.match(rebuilt.stderr, /^sectors +\[█+\] 0\/0 events/m, 'one without events too')
  t.same(await snapshot(), before)

  const one = await runCli(['projections', 'rebuild', 'workspaces'], { DATA_DIR: dataDir })
  t.equal(one.code, 0)
  t.notMatch(one.stdout, /organizations/)
  const unknown = await runCli(['projections', 'rebuild', 'nope'], { DATA_DIR: dataDir })
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, `no read model 'nope'; known: ${allProjections.map((p) => p.name).join(', ')}`)

  const status = await runCli(['projections', 'status', '--json'], { DATA_DIR: dataDir })
  t.equal(status.code, 0, status.stderr)
  t.same(
    JSON.parse(status.stdout).map((s: { name: string; caughtUp: boolean }) => [s.name, s.caughtUp]),
    allProjections.map((p) => [p.name, true]),
  )
})

t.test('configuration errors: one line per bad value, exit code 2', async (t) => {
  const result = await runCli(['start'], { PORT: 'eighty', LOG_LEVEL: 'loud', EVENT_STORE: 'esdb', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8,nonsense', WEBHOOK_RETRY_SCHEDULE: '0,-5' })
  t.equal(result.code, 2)
  for (const name of ['PORT=eighty', 'LOG_LEVEL=loud', 'EVENTSTORE_CONNECTION_STRING: required', 'DATABASE_URL: required', 'nonsense is not a CIDR', 'WEBHOOK_RETRY_SCHEDULE=0,-5']) {
    t.match(result.stderr, name)
  }
  t.equal(result.stderr.trim().split('\n').length, 7, 'a heading and one line for each of the six problems')
})

t.test('help and unknown commands', async (t) => {
  const help = await runCli(['--help'], {})
  t.equal(help.code, 0)
  t.match(help.stdout, /Commands:/)
  const unknown = await runCli(['frobnicate'], {})
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown command 'frobnicate'/)
  for (const command of ['start', 'bootstrap', 'migrate', 'projections', 'api-keys', 'deliveries', 'audit', 'analytics', 'dev-receiver']) {
    const result = await runCli([command, '--help'], {})
    t.equal(result.code, 0, `${command} --help`)
    t.match(result.stdout, /Usage:\s+flowd/)
  }
  // A command of actions run without one shows its usage and fails, so a script notices.
  for (const command of ['projections', 'api-keys', 'deliveries', 'audit', 'analytics']) {
    const result = await runCli([command], {})
    t.equal(result.code, 2, `${command} without an action`)
    t.match(result.stdout, /Usage:\s+flowd/)
  }
  const unknownOption = await runCli(['deliveries', 'list', '--frobnicate'], {})
  t.equal(unknownOption.code, 2, 'an unknown option is a usage error')
})
