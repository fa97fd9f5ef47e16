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

t.test('pool sizes: defaults, values, and each bad value reported by name', async (t) => {
  const defaults = loadConfig({})
  t.same([defaults.apiPoolSize, defaults.enginePoolSize, defaults.dispatcherPoolSize, defaults.projectorPoolSize], [10, 10, 10, undefined])
  t.equal(projectorPoolSize(defaults), allProjections.length + 1, 'the projector pool: one connection per read model and one more by default')

  const set = loadConfig({ API_POOL_SIZE: '4', ENGINE_POOL_SIZE: '5', PROJECTOR_POOL_SIZE: '6', DISPATCHER_POOL_SIZE: ' 7 ' })
  t.same(poolSizes(['api'], set), { shared: 3 + 4, projector: 0, dispatcher: 0 }, 'an api process opens the shared pool only')
  t.same(poolSizes(['projector'], set), { shared: 3 + 4, projector: 6, dispatcher: 0 }, 'a projector process: its event reads and its apply pool')
  t.same(poolSizes(['engine'], set), { shared: 3 + 5, projector: 0, dispatcher: 0 }, 'an engine process: its turns')
  t.same(poolSizes(['dispatcher'], set), { shared: 3, projector: 0, dispatcher: 7 }, 'a dispatcher process: its own pool')

  for (const name of ['API_POOL_SIZE', 'ENGINE_POOL_SIZE', 'PROJECTOR_POOL_SIZE', 'DISPATCHER_POOL_SIZE']) {
    for (const raw of ['0', '1001', 'many', '2.5']) {
      const problems = problemsOf({ [name]: raw })
      t.equal(problems.length, 1, `${name}=${raw} is one problem`)
      t.match(problems[0], `${name}=${raw}: expected a whole number from 1 to 1000`)
    }
  }
})

t.test('a process of several roles adds up their budgets, sharing the LISTEN and upkeep connections', async (t) => {
  const config = loadConfig({})
  const alone = ROLES.reduce((sum, role) => sum + connectionBudget([role], config), 0)
  // Four processes each have two LISTEN connections and one of upkeep; one process has them once.
  t.equal(connectionBudget(ROLES, config), alone - 3 * 3)
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
