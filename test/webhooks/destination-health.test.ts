import t from 'tap'
import { HEALTHY, afterAttempt, afterAttempts, type DestinationAttempt } from '../../src/webhooks/destination-health.js'

const policy = { failuresBeforeFailing: 3, probeSchedule: [5, 30, 300] }
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, seconds))
const failure = (seconds: number, probe = false): DestinationAttempt => ({ ok: false, at: at(seconds), error: 'timeout: no complete response within 10 s', probe })
const success = (seconds: number, probe = false): DestinationAttempt => ({ ok: true, at: at(seconds), error: null, probe })

t.test('failures below the threshold only count', async (t) => {
  const health = afterAttempts(HEALTHY, [failure(0), failure(1)], policy)
  t.match(health, { state: 'healthy', consecutiveFailures: 2, lastError: 'timeout: no complete response within 10 s', failingSince: null, nextProbeAt: null })
  t.same(afterAttempt(health, success(2), policy), HEALTHY, 'a 2xx clears them')
})

t.test('the threshold-th failure in a row makes the destination failing, its first probe one delay later', async (t) => {
  const health = afterAttempts(HEALTHY, [failure(0), failure(1), failure(2)], policy)
  t.match(health, { state: 'failing', consecutiveFailures: 3, probes: 0 })
  t.same(health.failingSince, at(2))
  t.same(health.nextProbeAt, at(7))
})

t.test('a failed probe moves the next one along the schedule, and the last delay repeats', async (t) => {
  const failing = afterAttempts(HEALTHY, [failure(0), failure(1), failure(2)], policy)
  const once = afterAttempt(failing, failure(10, true), policy)
  t.match(once, { state: 'failing', probes: 1, consecutiveFailures: 4 })
  t.same(once.nextProbeAt, at(40))
  t.same(once.failingSince, at(2), 'failing since the first time')
  const thrice = afterAttempts(once, [failure(50, true), failure(400, true)], policy)
  t.same(thrice.nextProbeAt, at(700), 'the last delay of the schedule repeats')
})

t.test('an attempt in flight when the destination became failing does not move the probe', async (t) => {
  const failing = afterAttempts(HEALTHY, [failure(0), failure(1), failure(2)], policy)
  const late = afterAttempt(failing, failure(3), policy)
  t.same(late.nextProbeAt, failing.nextProbeAt)
  t.equal(late.probes, 0)
  t.equal(late.consecutiveFailures, 4)
})

t.test('a 2xx restores a failing destination at once, probe or not', async (t) => {
  const failing = afterAttempts(HEALTHY, [failure(0), failure(1), failure(2), failure(10, true)], policy)
  t.same(afterAttempt(failing, success(20, true), policy), HEALTHY)
  t.same(afterAttempt(failing, success(20), policy), HEALTHY)
})
