import { readFileSync } from 'node:fs'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { connectionBudget, poolSizes, projectorPoolSize } from '../../src/connection-budget.js'
import { allProjections } from '../../src/all-projections.js'
import { ROLES, type Role } from '../../src/roles.js'

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env)
    return []
  } catch (error) {
    return (error as ConfigError).problems
  }
}

// Worked cases: the numbers are counted by hand from the pools' parts (two LISTEN connections and
// one of upkeep in every shared pool, four event reads beside a projector, one lease connection per
// projector or engine role), not computed by the functions under test.

t.test('pool sizes: defaults, values, and each bad value reported by name', async (t) => {
  const defaults = loadConfig({})
  t.same([defaults.apiPoolSize, defaults.enginePoolSize, defaults.dispatcherPoolSize, defaults.projectorPoolSize], [10, 10, 10, undefined])
  t.equal(allProjections.length, 15, 'the read models the projector pool is sized for (docs/scaling.md counts them)')
  t.equal(projectorPoolSize(defaults), 16, 'the projector pool: one connection per read model and one more by default')

  const set = loadConfig({ API_POOL_SIZE: '4', ENGINE_POOL_SIZE: '5', PROJECTOR_POOL_SIZE: '6', DISPATCHER_POOL_SIZE: ' 7 ' })
  t.same(poolSizes(['api'], set), { shared: 8, projector: 0, dispatcher: 0 }, 'an api process opens the shared pool only: 3 + 1 + 4')
  t.same(poolSizes(['projector'], set), { shared: 7, projector: 6, dispatcher: 0 }, 'a projector process: 3 + 4 event reads, and its apply pool')
  t.same(poolSizes(['engine'], set), { shared: 8, projector: 0, dispatcher: 0 }, 'an engine process: 3 + its 5 for turns')
  t.same(poolSizes(['dispatcher'], set), { shared: 3, projector: 0, dispatcher: 7 }, 'a dispatcher process: its own pool')
  t.same(poolSizes(ROLES, set), { shared: 17, projector: 6, dispatcher: 7 }, 'every role: 3 + 1 + 4 + 5 + 4 event reads shared')

  for (const name of ['API_POOL_SIZE', 'ENGINE_POOL_SIZE', 'PROJECTOR_POOL_SIZE', 'DISPATCHER_POOL_SIZE']) {
    for (const raw of ['0', '1001', 'many', '2.5']) {
      const problems = problemsOf({ [name]: raw })
      t.equal(problems.length, 1, `${name}=${raw} is one problem`)
      t.match(problems[0], `${name}=${raw}: expected a whole number from 1 to 1000`)
    }
  }
})

t.test('budgets of processes, with the lease connections, at the defaults and at set sizes', async (t) => {
  const defaults = loadConfig({})
  const cases: [readonly Role[], number, string][] = [
    [['api'], 14, '3 + 10 + the LISTEN for generated text'],
    [['projector'], 24, '3 + 4 + 16 + a lease'],
    [['engine'], 14, '3 + 10 + a lease'],
    [['dispatcher'], 13, '3 + 10'],
    [['api', 'dispatcher'], 24, '3 + 1 + 10 + 10: the LISTEN and upkeep connections once'],
    [ROLES, 56, '3 + 1 + 10 + 10 + 4 + 16 + 10 + two leases'],
  ]
  for (const [roles, budget, parts] of cases) t.equal(connectionBudget(roles, defaults), budget, `${roles.join('+')}: ${parts}`)

  const set = loadConfig({ API_POOL_SIZE: '4', ENGINE_POOL_SIZE: '5', PROJECTOR_POOL_SIZE: '6', DISPATCHER_POOL_SIZE: '7' })
  t.equal(connectionBudget(['projector'], set), 14, 'projector: 3 + 4 + 6 + a lease')
  t.equal(connectionBudget(['engine'], set), 9, 'engine: 3 + 5 + a lease')
  t.equal(connectionBudget(ROLES, set), 32, 'every role: 3 + 1 + 4 + 5 + 4 + 6 + 7 + two leases')
  const small = loadConfig({ API_POOL_SIZE: '4', ENGINE_POOL_SIZE: '4', PROJECTOR_POOL_SIZE: '6', DISPATCHER_POOL_SIZE: '4' })
  t.equal(connectionBudget(ROLES, small), 28, "the tests' small pools (test/helpers/cli.ts): 3 + 1 + 4 + 4 + 4 + 6 + 4 + two leases")

  const deployment: Role[] = ['api', 'api', 'projector', 'engine', 'engine', 'dispatcher']
  t.equal(
    deployment.reduce((sum, role) => sum + connectionBudget([role], defaults), 0),
    93,
    'two api, a projector, two engines and a dispatcher at the defaults: 14 + 14 + 24 + 14 + 14 + 13, within max_connections 100',
  )
})

t.test("docs/scaling.md's budget table is connectionBudget's at the default settings", async (t) => {
  const doc = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8')
  const config = loadConfig({})
  const lines = doc.split('\n').map((line) => line.trim())
  const table = lines.slice(lines.findIndex((line) => line.startsWith('| Role | Shared pool |')))
  const documented = (name: string) => {
    const row = table.slice(0, table.findIndex((line) => !line.startsWith('|'))).find((line) => line.startsWith(`| \`${name}\` |`))
    return Number(row?.split('|').at(-2)?.trim())
  }
  for (const role of ROLES) t.equal(documented(role), connectionBudget([role], config), `the ${role} row`)
  t.equal(documented('all'), connectionBudget(ROLES as readonly Role[], config), 'the all row')
})
