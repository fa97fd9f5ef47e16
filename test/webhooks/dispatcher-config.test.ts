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

t.test('a destination’s share and health: WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION, WEBHOOK_FAILURES_BEFORE_FAILING, WEBHOOK_PROBE_SCHEDULE', async (t) => {
  const defaults = loadConfig({})
  t.equal(defaults.webhookMaxInFlightPerDestination, 16)
  t.equal(defaults.webhookFailuresBeforeFailing, 5)
  t.same(defaults.webhookProbeSchedule, [5, 15, 30, 60, 120, 300])

  const set = loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION: '4', WEBHOOK_FAILURES_BEFORE_FAILING: '2', WEBHOOK_PROBE_SCHEDULE: '1, 2.5' })
  t.equal(set.webhookMaxInFlightPerDestination, 4)
  t.equal(set.webhookFailuresBeforeFailing, 2)
  t.same(set.webhookProbeSchedule, [1, 2.5])

  t.match(problemsOf({ WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION: '0' })[0], 'WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION=0: expected a whole number from')
  t.match(problemsOf({ WEBHOOK_FAILURES_BEFORE_FAILING: 'x' })[0], 'WEBHOOK_FAILURES_BEFORE_FAILING=x: expected a whole number from')
  t.same(problemsOf({ WEBHOOK_PROBE_SCHEDULE: '5,,30' }), ['WEBHOOK_PROBE_SCHEDULE=5,,30: expected comma-separated seconds such as 0,5,300'])
  t.same(problemsOf({ WEBHOOK_RETRY_SCHEDULE: '-1' }), ['WEBHOOK_RETRY_SCHEDULE=-1: expected comma-separated seconds such as 0,5,300'], 'the retry schedule is read the same way')
})
