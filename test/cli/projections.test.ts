import { spawn } from 'node:child_process'
import pg from 'pg'
import t from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { childEnv, cliNodeArgs, cliPath, cliStore, cliStoreNames, runCli, type CliStore } from '../helpers/cli.js'

// The stores are opened for the whole file: the swap test on Postgres goes on from the events
// the rebuild test wrote there.
const stores = new Map<string, CliStore>()
for (const name of cliStoreNames) stores.set(name, await cliStore(t, name))

for (const [name, store] of stores) t.test(`flowd projections rebuild rebuilds each read model to the same rows (${name})`, async (t) => {
  const { env } = store
  t.equal((await runCli(['bootstrap', '--organization', 'A', '--workspace', 'W1', '--json'], env)).code, 0)
  t.equal((await runCli(['bootstrap', '--organization', 'B', '--workspace', 'W2', '--json'], env)).code, 0)
  const snapshot = async () => {
    const storage = await store.open()
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
  const rebuilt = await runCli(['projections', 'rebuild'], env)
  t.equal(rebuilt.code, 0, assertionMessage(rebuilt.stderr))
  t.match(rebuilt.stdout, /organizations: rebuilt from 2 events/)
  t.match(rebuilt.stdout, /workspaces: rebuilt from 2 events/)
  t.match(rebuilt.stdout, /api-keys: rebuilt from 2 events/)
  t.match(rebuilt.stderr, /^workspaces +\[█+\] 2\/2 events/m, 'each read model ends with a full bar, named')
  t.match(rebuilt.stderr, /^sectors +\[█+\] 0\/0 events/m, 'one without events too')
  t.same(await snapshot(), before)

  const one = await runCli(['projections', 'rebuild', 'workspaces'], env)
  t.equal(one.code, 0)
  t.notMatch(one.stdout, /organizations/)
  const unknown = await runCli(['projections', 'rebuild', 'nope'], env)
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, `no read model 'nope'; known: ${allProjections.map((p) => p.name).join(', ')}`)

  const status = await runCli(['projections', 'status', '--json'], env)
  t.equal(status.code, 0, assertionMessage(status.stderr))
  t.same(
    JSON.parse(status.stdout).map((s: { name: string; caughtUp: boolean }) => [s.name, s.caughtUp]),
    allProjections.map((p) => [p.name, true]),
  )
})

// The embedded database rebuilds one read model at a time, on its one connection: where the test
// above ran on Postgres, a rebuild of every read model there too (its events are not what it tests).
if (!stores.has('pglite')) {
  t.test('flowd projections rebuild on the embedded database', async (t) => {
    const { env } = await cliStore(t, 'pglite')
    const rebuilt = await runCli(['projections', 'rebuild'], env)
    t.equal(rebuilt.code, 0, assertionMessage(rebuilt.stderr))
    for (const { name } of allProjections) {
      t.match(rebuilt.stdout, new RegExp(`^${name}: rebuilt from 0 events`, 'm'), `${name} rebuilt`)
      t.match(rebuilt.stderr, new RegExp(`^${name} +\\[█+\\] 0/0 events`, 'm'))
    }
  })
}

const postgres = stores.get('postgres')
t.test('flowd projections rebuild names the connection holding up a swap, and what it would drop', { skip: postgres ? false : 'DATABASE_URL is not set' }, async (t) => {
  const { env } = postgres!
  const url = env.DATABASE_URL!
  const analyst = new pg.Client({ connectionString: url, application_name: 'analyst-report' })
  analyst.on('error', () => {})
  await analyst.connect()
  t.teardown(() => analyst.end())
  await analyst.query('begin')
  await analyst.query('select count(*) from workspaces')

  const child = spawn(process.execPath, [...cliNodeArgs, cliPath, 'projections', 'rebuild', 'workspaces'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  for (let i = 0; i < 1200 && !stdout.includes('swap waiting'); i++) await new Promise((resolve) => setTimeout(resolve, 25))
  await analyst.query('commit')
  t.equal(await exited, 0, assertionMessage(stderr))
  t.match(stdout, /^workspaces: swap waiting since \S+ for pid \d+ \(analyst-report\) user \S+ from \S+, idle in transaction since \S+: select count\(\*\) from workspaces$/m, 'the connection in the way, named')
  t.match(stderr, /the swap of a rebuilt read model waits for connections holding its live tables/, 'and logged')
  t.match(stdout, /^workspaces: rebuilt from 2 events/m, 'the swap done once it ends')

  await analyst.query('create view workspace_names as select name from workspaces')
  await analyst.query('create rule workspace_names_read_only as on insert to workspace_names do instead nothing')
  const refused = await runCli(['projections', 'rebuild', 'workspaces'], env)
  t.equal(refused.code, 4, 'refused')
  t.match(refused.stderr, /would drop .*rule workspace_names_read_only on view public\.workspace_names/, 'naming what it would drop')
})
