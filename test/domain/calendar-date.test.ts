import fc from 'fast-check'
import t from 'tap'
import { calendarDateAt, parseCalendarDate } from '../../src/domain/calendar-date.js'
import { examples } from '../helpers/decider-spec.js'

const DAY_MS = 86_400_000
const at = (iso: string) => Date.parse(iso)

/** Zones whose offset has been fixed since 2020 (São Paulo ended daylight saving in 2019), in minutes east of UTC. */
const FIXED_ZONES: readonly (readonly [zone: string, offsetMinutes: number])[] = [
  ['UTC', 0],
  ['America/Sao_Paulo', -180],
  ['Asia/Kolkata', 330],
  ['Pacific/Kiritimati', 840],
  ['Pacific/Pago_Pago', -660],
]

/** A date's `YYYY-MM-DD`, by the Date API rather than the module's own arithmetic. */
const isoOf = (date: Date) => date.toISOString().slice(0, 10)
const partsOf = (date: Date) => ({ year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() })
const two = (n: number) => String(n).padStart(2, '0')

/** Any day the forms can write: a four-digit year. */
const aDate = fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
/** An instant of a turn, often a minute either side of a UTC midnight, where the zones disagree most. */
const anInstant = fc
  .tuple(
    fc.integer({ min: at('2020-01-01T00:00:00Z') / DAY_MS, max: at('2025-12-31T00:00:00Z') / DAY_MS }),
    fc.oneof(fc.integer({ min: 0, max: DAY_MS - 1 }), fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: DAY_MS - 60_000, max: DAY_MS - 1 })),
  )
  .map(([day, ms]) => day * DAY_MS + ms)
const aZone = fc.constantFrom(...FIXED_ZONES)

t.test('calendarDateAt: the day an instant falls on in a zone', async (t) => {
  const date = function date(iso: string, zone: string) {
    return calendarDateAt(at(iso), zone)
  }
  examples(t, date, [
    ['UTC at half past one', ['2026-11-28T01:30:00Z', 'UTC'], '2026-11-28'],
    ['São Paulo is still on the evening before', ['2026-11-28T01:30:00Z', 'America/Sao_Paulo'], '2026-11-27'],
    ['Kolkata is on the same day', ['2026-11-28T01:30:00Z', 'Asia/Kolkata'], '2026-11-28'],
    ['Kiritimati is on the next day late in the UTC day', ['2026-11-28T23:00:00Z', 'Pacific/Kiritimati'], '2026-11-29'],
    ['Kolkata too', ['2026-11-28T23:00:00Z', 'Asia/Kolkata'], '2026-11-29'],
    ['Pago Pago is on the day before early in it', ['2026-11-28T10:30:00Z', 'Pacific/Pago_Pago'], '2026-11-27'],
    ['and Kiritimati on the day after at that instant', ['2026-11-28T10:30:00Z', 'Pacific/Kiritimati'], '2026-11-29'],
    ['the last millisecond of a UTC day', ['2026-11-28T23:59:59.999Z', 'UTC'], '2026-11-28'],
    ['New York, the night its clocks go forward', ['2026-03-08T04:30:00Z', 'America/New_York'], '2026-03-07'],
  ])

  t.test('matches the zone’s offset at every instant (property)', async (t) => {
    fc.assert(
      fc.property(anInstant, aZone, (instant, [zone, offset]) => calendarDateAt(instant, zone) === isoOf(new Date(instant + offset * 60_000))),
      { numRuns: 2000 },
    )
    t.pass('2000 instants in five zones')
  })
})

t.test('parseCalendarDate: the forms it reads', async (t) => {
  const today = () => '2026-11-27'
  const parse = function parse(text: string) {
    return parseCalendarDate(text, today)
  }
  examples(t, parse, [
    ['ISO', ['2026-11-28'], '2026-11-28'],
    ['day first', ['28/11/2026'], '2026-11-28'],
    ['day first, one-digit day and month', ['3/4/2026'], '2026-04-03'],
    ['day first when either reading is a date: 03/04 is the 3rd of April', ['03/04/2026'], '2026-04-03'],
    ['spaces around', ['  28/11/2026\n'], '2026-11-28'],
    ['29 February of a leap year', ['29/02/2028'], '2028-02-29'],
    ['29 February of a year divisible by 400', ['2000-02-29'], '2000-02-29'],
    ['today', ['today'], '2026-11-27'],
    ['hoje, in capitals', ['HOJE'], '2026-11-27'],
    ['tomorrow', ['Tomorrow'], '2026-11-28'],
    ['amanhã', ['amanhã'], '2026-11-28'],
    ['amanha without its accent', ['amanha'], '2026-11-28'],
    ['AMANHÃ decomposed (NFD)', ['AMANHA\u0303'], '2026-11-28'],
  ])
  examples(t, parse, [
    ['a month-first date', ['11/28/2026'], undefined],
    ['31 February', ['31/02/2026'], undefined],
    ['29 February of a common year', ['29/02/2026'], undefined],
    ['29 February of a century not divisible by 400', ['1900-02-29'], undefined],
    ['month 13', ['2026-13-01'], undefined],
    ['day 0', ['00/11/2026'], undefined],
    ['a two-digit year', ['28/11/26'], undefined],
    ['ISO with one-digit month', ['2026-1-05'], undefined],
    ['ISO with a time', ['2026-11-28T10:00'], undefined],
    ['dashes day first', ['28-11-2026'], undefined],
    ['two dates', ['28/11/2026 29/11/2026'], undefined],
    ['yesterday', ['yesterday'], undefined],
    ['ontem', ['ontem'], undefined],
    ['a word and more', ['tomorrow please'], undefined],
    ['free text', ['next friday'], undefined],
    ['nothing', [''], undefined],
    ['a name on the object prototype', ['constructor'], undefined],
  ])
})

t.test('the forms name the same day in every zone and at every instant (property)', async (t) => {
  fc.assert(
    fc.property(aDate, anInstant, aZone, fc.boolean(), (date, instant, [zone], padded) => {
      const { year, month, day } = partsOf(date)
      const today = () => calendarDateAt(instant, zone)
      const dayFirst = padded ? `${two(day)}/${two(month)}/${year}` : `${day}/${month}/${year}`
      return parseCalendarDate(isoOf(date), today) === isoOf(date) && parseCalendarDate(dayFirst, today) === isoOf(date)
    }),
    { numRuns: 2000 },
  )
  t.pass('2000 dates, in both forms')
})

t.test('a month-first reading is never taken (property)', async (t) => {
  const dayAfterTwelve = aDate.filter((date) => date.getUTCDate() > 12)
  fc.assert(
    fc.property(dayAfterTwelve, (date) => {
      const { year, month, day } = partsOf(date)
      return parseCalendarDate(`${two(month)}/${two(day)}/${year}`, () => '2026-01-01') === undefined
    }),
  )
  t.pass('MM/DD/YYYY with a day after 12 is refused')
})

t.test('a day past the end of its month is refused in both forms (property)', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1000, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 3 }), (year, month, past) => {
      const last = new Date(Date.UTC(year, month, 0)).getUTCDate()
      const day = last + past
      return parseCalendarDate(`${year}-${two(month)}-${two(day)}`, () => '2026-01-01') === undefined && parseCalendarDate(`${day}/${month}/${year}`, () => '2026-01-01') === undefined
    }),
  )
  t.pass('the 29th to 34th past a month’s end')
})

t.test('today and tomorrow are the zone’s days at the turn’s instant (property)', async (t) => {
  const word = fc.constantFrom(['today', 0], ['hoje', 0], ['tomorrow', 1], ['amanhã', 1], ['amanha', 1])
  const cased = (text: string, upper: boolean[]) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')
  fc.assert(
    fc.property(anInstant, aZone, word, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), fc.constantFrom('', ' ', '\t', '  '), (instant, [zone, offset], [text, days], upper, space) => {
      const local = new Date(instant + offset * 60_000)
      const expected = isoOf(new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + days)))
      return parseCalendarDate(`${space}${cased(text, upper)}${space}`, () => calendarDateAt(instant, zone)) === expected
    }),
    { numRuns: 2000 },
  )
  t.pass('2000 instants, words in any case')
})
