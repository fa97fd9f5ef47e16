import { join } from 'node:path'
import t from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { openStorage } from '../../src/store/connect.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { runCli } from '../helpers/cli.js'
import { migratedDataDir } from '../helpers/pglite-template.js'

t.test('flowd projections rebuild rebuilds each read model to the same rows', async (t) => {
  const dataDir = await migratedDataDir(t)
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
  t.equal(rebuilt.code, 0, assertionMessage(rebuilt.stderr))
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
  t.equal(status.code, 0, assertionMessage(status.stderr))
  t.same(
    JSON.parse(status.stdout).map((s: { name: string; caughtUp: boolean }) => [s.name, s.caughtUp]),
    allProjections.map((p) => [p.name, true]),
  )
})
