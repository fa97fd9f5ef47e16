import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/store/database.js'

/**
 * Every row of a read-model table as Postgres renders it in JSON, sorted: two read models hold the
 * same data exactly when these agree. Kept counts and sums (migration 0013) that went back to zero
 * are left out: such a row stays where cards moved one write at a time and is never made where one
 * batch wrote the same cards, and readers add the rows up, so both read the same.
 */
export async function readModelRows(db: Kysely<Database>, table: string): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`select row_to_json(r)::text as row from ${countingRows(table)} as r`.execute(db)
  return rows.map((r) => r.row).sort()
}

/** A read-model table's rows as a subquery, kept totals back at zero left out (see {@link readModelRows}). */
export const countingRows = (table: string) =>
  sql`(select * from ${sql.table(table)} as r where coalesce(to_jsonb(r) ->> 'n', to_jsonb(r) ->> 'total') is distinct from '0')`
