import { createHash } from 'node:crypto'
import type { CompiledQuery } from 'kysely'
import pg from 'pg'

/** Statement names by SQL text: the same text always runs under the same name. */
const names = new Map<string, string>()

/**
 * Marks a query to run on Postgres as a named statement: each connection parses it once and, after
 * a few runs, keeps its plan. For the statements the service runs hundreds of times a second
 * (reading the log, checkpoints, claims), where parsing and planning cost more than running.
 * Only for fixed texts: a name stays prepared on every connection for the connection's life, so a
 * text that varies with its input (an `in` list of any length) must not be marked. PGlite ignores
 * the mark.
 */
export function prepared<Q extends CompiledQuery>(query: Q): Q {
  if (!names.has(query.sql)) names.set(query.sql, `flowd_${createHash('sha1').update(query.sql).digest('hex').slice(0, 20)}`)
  return query
}

/** A `pg` client that runs the texts marked by {@link prepared} by name; every other query unnamed, as `pg.Client` does. */
export class PreparingClient extends pg.Client {
  // `any`: one signature standing for all of pg's overloads, whose arguments pass through unchanged.
  override query(config: any, values?: any, callback?: any): any {
    const name = typeof config === 'string' && Array.isArray(values) ? names.get(config) : undefined
    return name ? super.query({ name, text: config as string, values: values as unknown[] }, callback) : super.query(config, values, callback)
  }
}
