import { TZDate } from '@date-fns/tz'
import { startOfDay } from 'date-fns/startOfDay'
import { subDays } from 'date-fns/subDays'
import type { DbOrTrx } from '../store/database.js'

export type DateRange = 'today' | 'last7days' | 'last15days' | 'last30days'

const DAYS: Record<DateRange, number> = { today: 1, last7days: 7, last15days: 15, last30days: 30 }

/**
 * The first instant of a date range: local midnight of the range's first calendar day in
 * `timeZone` (`last7days` is today and the 6 days before it).
 */
export function dateRangeStart(range: DateRange, now: Date, timeZone = 'UTC'): Date {
  const local = new TZDate(now.getTime(), timeZone)
  return new Date(startOfDay(subDays(local, DAYS[range] - 1)).getTime())
}

/** The first UTC midnight at or after `instant`: counts kept per UTC day cover whole days from there. */
export function startOfNextUtcDay(instant: Date): Date {
  const midnight = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()))
  return midnight.getTime() === instant.getTime() ? midnight : new Date(midnight.getTime() + 86_400_000)
}

/**
 * The first instant of a list's `dateRange`: days count in the zone of the one workspace the list
 * is filtered to, else in UTC.
 */
export async function dateRangeSince(db: DbOrTrx, query: { dateRange?: DateRange; now: Date; workspaceId?: string }): Promise<Date | undefined> {
  if (!query.dateRange) return undefined
  return dateRangeStart(query.dateRange, query.now, await workspaceTimeZone(db, query.workspaceId))
}

/** The time zone a workspace's days are counted in: its own, or UTC. */
export async function workspaceTimeZone(db: DbOrTrx, workspaceId: string | undefined): Promise<string> {
  const zone = workspaceId ? (await db.selectFrom('workspaces').select('timezone').where('id', '=', workspaceId).executeTakeFirst())?.timezone : undefined
  return zone ?? 'UTC'
}
