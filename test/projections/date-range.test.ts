import t from 'tap'
import { dateRangeStart, startOfNextUtcDay } from '../../src/projections/date-range.js'

t.test('date ranges start at local midnight of their first day', async (t) => {
  const now = new Date('2026-03-10T02:30:00.000Z')
  t.equal(dateRangeStart('today', now).toISOString(), '2026-03-10T00:00:00.000Z')
  t.equal(dateRangeStart('last7days', now).toISOString(), '2026-03-04T00:00:00.000Z')
  t.equal(dateRangeStart('last15days', now).toISOString(), '2026-02-24T00:00:00.000Z')
  t.equal(dateRangeStart('last30days', now).toISOString(), '2026-02-09T00:00:00.000Z')
  // 02:30 UTC is still the 9th in São Paulo (UTC-3): today began there at 03:00 UTC on the 9th.
  t.equal(dateRangeStart('today', now, 'America/Sao_Paulo').toISOString(), '2026-03-09T03:00:00.000Z')
  t.equal(dateRangeStart('today', now, 'Asia/Tokyo').toISOString(), '2026-03-09T15:00:00.000Z')
})

t.test('ranges that cross a daylight-saving change keep local midnight', async (t) => {
  // New York moves to UTC-4 on 2026-03-08; the range's first day, the 4th, is still UTC-5.
  const now = new Date('2026-03-10T16:00:00.000Z')
  t.equal(dateRangeStart('last7days', now, 'America/New_York').toISOString(), '2026-03-04T05:00:00.000Z')
  t.equal(dateRangeStart('today', now, 'America/New_York').toISOString(), '2026-03-10T04:00:00.000Z')
})

t.test('whole UTC days of kept counts start at the first UTC midnight at or after an instant', async (t) => {
  t.equal(startOfNextUtcDay(new Date('2026-03-09T03:00:00.000Z')).toISOString(), '2026-03-10T00:00:00.000Z')
  t.equal(startOfNextUtcDay(new Date('2026-03-09T00:00:00.000Z')).toISOString(), '2026-03-09T00:00:00.000Z')
  t.equal(startOfNextUtcDay(new Date('2026-12-31T23:59:59.999Z')).toISOString(), '2027-01-01T00:00:00.000Z')
})
