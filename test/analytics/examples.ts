// The examples of docs/analytics.md and their answers over the data set of ./data-set.ts.
import { readFileSync } from 'node:fs'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/store/database.js'

/** Every ```sql block of docs/analytics.md, in order: the docs and this test cannot drift apart. */
export const documentedQueries = (): string[] =>
  [...readFileSync(new URL('../../docs/analytics.md', import.meta.url), 'utf8').matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((match) => match[1]!.trim().replace(/;$/, ''))

/** A query's rows as Postgres renders them in JSON (dates as `YYYY-MM-DD`, numerics as numbers): the same on both backends. */
export async function rowsOf(db: Kysely<Database> | { query(text: string): Promise<{ rows: { rows: string }[] }> }, query: string): Promise<unknown[]> {
  const text = `select coalesce(json_agg(q), '[]'::json)::text as rows from (${query}) as q`
  const result = 'query' in db ? await db.query(text) : await sql<{ rows: string }>`${sql.raw(text)}`.execute(db)
  return JSON.parse(result.rows[0]!.rows) as unknown[]
}

/** The answers of the data set (test/analytics/data-set.ts), worked out by hand from its table. */
export const EXPECTED: unknown[][] = [
  [
    { node_id: 'ask', node_type: 'question', sessions_reached: 5, sessions_answered: 3, sessions_dropped_off: 1 },
    { node_id: 'greet', node_type: 'message', sessions_reached: 5, sessions_answered: 0, sessions_dropped_off: 0 },
    { node_id: 'start', node_type: 'start', sessions_reached: 5, sessions_answered: 0, sessions_dropped_off: 0 },
    { node_id: 'to-sales', node_type: 'transfer', sessions_reached: 2, sessions_answered: 0, sessions_dropped_off: 0 },
    { node_id: 'end', node_type: 'end', sessions_reached: 1, sessions_answered: 0, sessions_dropped_off: 0 },
    { node_id: 'help', node_type: 'message', sessions_reached: 1, sessions_answered: 0, sessions_dropped_off: 0 },
  ],
  // C timed out waiting at the question, of the 5 that reached it.
  [{ node_id: 'ask', sessions_dropped_off: 1, drop_off_pct: 20 }],
  [
    { day: '2026-03-08', status: 'completed', sessions: 2 },
    { day: '2026-03-09', status: 'completed', sessions: 1 },
    { day: '2026-03-09', status: 'timeout', sessions: 1 },
    { day: '2026-03-10', status: 'running', sessions: 1 },
  ],
  // 120, 240, 300 and 1800 s: the median halfway between 240 and 300, p90 at 0.7 of 300 → 1800.
  [{ flow_name: 'Support', flow_version: 1, finished_sessions: 4, median_seconds: 270, p90_seconds: 1350 }],
  [{ flow_name: 'Support', flow_version: 1, sessions: 5, completed: 3, completed_pct: 60 }],
  [
    { day: '2026-03-08', sector_name: 'Sales team', transfers: 1 },
    { day: '2026-03-09', sector_name: 'Sales team', transfers: 1 },
  ],
  [{ flow_name: 'Support', sessions: 5, transferred: 2 }],
  // New: card 1 (left at noon), card 2 (entered 08:00, left 14:00) and card 3; card 2 in Lost, card 1 in Won from noon.
  [
    { stage_name: 'Lost', cards: 1, entered: 1 },
    { stage_name: 'New', cards: 3, entered: 1 },
    { stage_name: 'Won', cards: 1, entered: 1 },
  ],
  // New: 24 h (card 1) and 6 h (card 2), card 3 still there; Lost: 20 h until card 2's deletion; Won: card 1 still there.
  [
    { stage_name: 'Lost', stays: 1, finished_stays: 1, median_hours: 20 },
    { stage_name: 'New', stays: 3, finished_stays: 2, median_hours: 15 },
    { stage_name: 'Won', stays: 1, finished_stays: 0, median_hours: null },
  ],
  // A, B and D answered; D's first, invalid reply does not count.
  [{ flow_name: 'Support', node_id: 'ask', sessions_reached: 5, sessions_answered: 3, answered_pct: 60 }],
  // 03-08: A's "small" call and B's two, B's "large" one; 03-09: D's "large" one.
  [
    { day: '2026-03-08', model: 'large', calls: 1, prompt_tokens: 400, completion_tokens: 90, sessions: 1 },
    { day: '2026-03-08', model: 'small', calls: 3, prompt_tokens: 300, completion_tokens: 75, sessions: 2 },
    { day: '2026-03-09', model: 'large', calls: 1, prompt_tokens: 300, completion_tokens: 60, sessions: 1 },
  ],
]

