import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

t.test('WEBHOOK_MAX_IN_FLIGHT and WEBHOOK_LEASE_SECONDS: defaults, values, and each bad value reported by name', async (t) => {
  const defaults = loadConfig({})
  t.equal(defaults.webhookMaxInFlight, 128)
  t.equal(defaults.webhookLeaseSeconds, 2)

  const set = loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '32', WEBHOOK_LEASE_SECONDS: ' 60 ' })
  t.equal(set.webhookMaxInFlight, 32)
  t.equal(set.webhookLeaseSeconds, 60)

  for (const [name, raw] of [
    ['WEBHOOK_MAX_IN_FLIGHT', '0'],
    ['WEBHOOK_MAX_IN_FLIGHT', '5000'],
    ['WEBHOOK_MAX_IN_FLIGHT', 'many'],
    ['WEBHOOK_MAX_IN_FLIGHT', '1.5'],
    ['WEBHOOK_LEASE_SECONDS', '0'],
    ['WEBHOOK_LEASE_SECONDS', '-1'],
  ] as const) {
    const problems = problemsOf({ [name]: raw })
    t.equal(problems.length, 1, `${name}=${raw} is one problem`)
    t.match(problems[0], `${name}=${raw}: expected a whole number from`)
  }
  t.equal(problemsOf({ WEBHOOK_MAX_IN_FLIGHT: '0', WEBHOOK_LEASE_SECONDS: '0' }).length, 2, 'both reported at once')
})
