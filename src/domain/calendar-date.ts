/** A day of the calendar, `YYYY-MM-DD`, with no time of day and no time zone. */
export type CalendarDate = string

const ISO = /^(\d{4})-(\d{2})-(\d{2})$/
// Day first, as people write dates in Brazil and most of the world: 03/04/2026 is the 3rd of April.
// A month-first reading is never tried, so 11/28/2026 is no date at all.
const DAY_FIRST = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/
/** Words for a day counted from the turn's, by their folded spelling. */
const DAYS_FROM_TODAY: ReadonlyMap<string, number> = new Map([
  ['today', 0],
  ['hoje', 0],
  ['tomorrow', 1],
  ['amanha', 1],
])

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
const daysIn = (year: number, month: number): number => (month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)

const pad = (value: number, width: number): string => String(value).padStart(width, '0')
const format = (year: number, month: number, day: number): CalendarDate => `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`

/** The date, if the calendar has it (no 31/02, no 29/02 outside leap years). */
const dateOf = (year: number, month: number, day: number): CalendarDate | undefined =>
  month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) ? format(year, month, day) : undefined

const nextDay = (date: CalendarDate): CalendarDate => {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  if (day < daysIn(year, month)) return format(year, month, day + 1)
  return month < 12 ? format(year, month + 1, 1) : format(year + 1, 1, 1)
}

/** Lower case, without accents: `AMANHÃ` and `amanha` are the same word. */
const folded = (text: string): string => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()

// Making a formatter costs far more than formatting with one; workspaces share a few hundred zones at most.
const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterIn = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone)
  if (!formatter) formatters.set(timeZone, (formatter = new Intl.DateTimeFormat('en-US-u-ca-gregory-nu-latn', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' })))
  return formatter
}

/** The calendar date at an instant (milliseconds since the epoch) in an IANA time zone. */
export const calendarDateAt = (epochMs: number, timeZone: string): CalendarDate => {
  const parts = formatterIn(timeZone).formatToParts(epochMs)
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value)
  return format(part('year'), part('month'), part('day'))
}

/**
 * The date a reply names: `2026-11-28`, `28/11/2026` (day first; one-digit day and month too), or
 * `today`, `tomorrow`, `hoje`, `amanhã` in any case, with or without accents, counted from `today()`.
 * Anything else, a date the calendar lacks included, names none.
 */
export const parseCalendarDate = (text: string, today: () => CalendarDate): CalendarDate | undefined => {
  const typed = text.trim()
  const days = DAYS_FROM_TODAY.get(folded(typed))
  if (days !== undefined) {
    let date = today()
    for (let day = 0; day < days; day++) date = nextDay(date)
    return date
  }
  const iso = ISO.exec(typed)
  if (iso) return dateOf(Number(iso[1]), Number(iso[2]), Number(iso[3]))
  const dayFirst = DAY_FIRST.exec(typed)
  if (dayFirst) return dateOf(Number(dayFirst[3]), Number(dayFirst[2]), Number(dayFirst[1]))
  return undefined
}
