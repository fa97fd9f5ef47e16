import t from 'tap'
import { ConfigError, DEFAULT_RETRY_SCHEDULE, loadConfig } from '../../src/config.js'
import { honoursRetryAfter, MAX_RETRY_AFTER_SECONDS, nextRetryDelay, parseRetryAfter } from '../../src/webhooks/retry.js'

const NOW = new Date('2026-11-22T10:00:00.000Z')

t.test('the schedule gives the delay before each next attempt, then nothing', async (t) => {
  const middle = () => 0.5
  t.same(
    DEFAULT_RETRY_SCHEDULE.map((_, attemptsMade) => nextRetryDelay(DEFAULT_RETRY_SCHEDULE, attemptsMade, undefined, middle)),
    [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
    'at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h',
  )
  t.equal(nextRetryDelay(DEFAULT_RETRY_SCHEDULE, 8), undefined, 'after the eighth attempt the delivery is dead')
  t.equal(nextRetryDelay([], 0), undefined)
})

t.test('jitter spreads each delay over ±10 %', async (t) => {
  t.equal(nextRetryDelay([0, 100], 1, undefined, () => 0), 90)
  t.ok(Math.abs(nextRetryDelay([0, 100], 1, undefined, () => 1)! - 110) < 1e-9)
  t.equal(nextRetryDelay([0, 100], 0, undefined, () => 1), 0, 'at once stays at once')
})

t.test('Retry-After wins only when it asks for longer', async (t) => {
  t.equal(nextRetryDelay([0, 5], 1, 120, () => 0.5), 120)
  t.equal(nextRetryDelay([0, 300], 1, 10, () => 0.5), 300)
  t.equal(nextRetryDelay([0], 1, 120), undefined, 'it does not extend a used-up schedule')
})

t.test('Retry-After as seconds or an HTTP date, capped at a day', async (t) => {
  t.equal(parseRetryAfter('120', NOW), 120)
  t.equal(parseRetryAfter(' 0 ', NOW), 0)
  t.equal(parseRetryAfter(['30', '60'], NOW), 30)
  t.equal(parseRetryAfter('Sun, 22 Nov 2026 10:02:00 GMT', NOW), 120)
  t.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', NOW), 0, 'a date in the past means now')
  t.equal(parseRetryAfter('99999999', NOW), MAX_RETRY_AFTER_SECONDS)
  for (const bad of [undefined, '', 'soon', '-5', '1.5e3x']) t.equal(parseRetryAfter(bad, NOW), undefined, `${String(bad)} is ignored`)
})

t.test('only 429 and 503 ask the sender to wait', async (t) => {
  t.same([200, 301, 400, 429, 500, 502, 503].filter(honoursRetryAfter), [429, 503])
})

t.test('WEBHOOK_RETRY_SCHEDULE: seconds, comma-separated; anything else is a configuration error', async (t) => {
  t.same(loadConfig({}).webhookRetrySchedule, DEFAULT_RETRY_SCHEDULE)
  t.same(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0, 1.5 ,60' }).webhookRetrySchedule, [0, 1.5, 60])
  for (const bad of ['0,,5', '0,5,', 'soon', '0,-1']) {
    t.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), ConfigError, bad)
  }
})
