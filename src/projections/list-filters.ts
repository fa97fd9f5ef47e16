import type { SelectQueryBuilder } from 'kysely'
import type { DbOrTrx } from '../store/database.js'
import { dateRangeStart, type DateRange } from './date-range.js'

/** Timestamps leave the read models as ISO 8601 UTC with milliseconds. */
export const toIso = (value: Date | string): string => new Date(value).toISOString()

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

/** How many rows a list's filtered query matches, for the page envelope's `totalElements`. */
export async function countRows<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): Promise<number> {
  const row = await query
    .clearSelect()
    .select((eb) => eb.fn.countAll<string | number>().as('total'))
    .executeTakeFirstOrThrow()
  return Number((row as { total: string | number }).total)
}

/** Limits a list query to one zero-based page; use with `$call`. */
export const onePage =
  ({ page, size }: { page: number; size: number }) =>
  <Q extends { limit(n: number): Q; offset(n: number): Q }>(query: Q): Q =>
    query.limit(size).offset(page * size)
