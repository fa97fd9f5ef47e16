import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import type { TSchema } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import type { Test } from 'tap'
import { assertMatchesSchema } from '../../src/commands/handle.js'
import type { DomainEvent } from '../../src/domain/decider.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import type { Projection } from '../../src/projections/projection.js'
import type { Database } from '../../src/store/database.js'
import { assertionMessage } from './assertion-message.js'
import { countingRows, readModelRows } from './read-model-rows.js'
import { pgliteBackend } from './storage.js'

/** Rows expected in a table, each naming the columns it checks. */
export type ExpectedRows = Partial<Record<keyof Database & string, readonly Record<string, unknown>[]>>

/**
 * Given/then specs of a read model, after Emmett's `PostgreSQLProjectionSpec`, as tap assertions:
 *
 *   const { given } = projectionSpec(t, sectorsProjection, { streamOf: (e: SectorEvent) => sectorStream(e.data.sectorId), schemas: sector.eventSchemas })
 *   await given(created, renamed('Support')).then({ sectors: [{ id: sectorId, name: 'Support' }] }, 'a rename replaces the name')
 *   await given(created, deleted).then({ sectors: [] }, 'a deleted sector leaves no row')
 *
 * `given` records the events on their streams in order (revisions and positions as the store gives
 * them), each checked against its schema, and applies every event twice in a row, each time in a
 * transaction of its own (with a fold: as the fold of that one event). So every case also proves
 * idempotency: beyond the rows `then` names, each table the projection writes must hold exactly
 * what applying each event once leaves.
 *
 * `then` compares each table it names on the columns its expected rows name, rows in any order; a
 * table named with no rows must be empty. Timestamps read as ISO 8601 strings; kept totals back at
 * zero count as no row, as in `readModelRows`. Each case is one assertion named by its situation,
 * on a migrated PGlite of the spec's own whose tables are emptied between cases; a failing one
 * names the given events and the rows missing and unexpected.
 */
export function projectionSpec<Event extends DomainEvent>(
  t: Test,
  projection: Projection,
  options: { streamOf: (event: Event) => string; schemas: Record<string, TSchema> },
) {
  let database: Promise<Kysely<Database>> | undefined
  let cases: Promise<void> = Promise.resolve()
  return {
    given: (...history: Event[]) => ({
      /** Resolves once the case is checked; cases of one spec run one after another. */
      then(expected: ExpectedRows, situation: string): Promise<void> {
        database ??= pgliteBackend.open(t).then((storage) => storage.db)
        // Taken now, while the spec's line is on the stack: a failure points there, not at this kit.
        const stack = (new Error().stack ?? '').split('\n').slice(1).filter((line) => !line.includes('projection-spec.ts')).join('\n')
        const run = cases.then(async () => {
          const context = `given [${history.map((event) => event.type).join(', ')}]`
          const problem = await check(await database!, projection, options, history, expected)
          if (problem === undefined) t.pass(assertionMessage(situation))
          else t.fail(assertionMessage(`${situation}: ${context}: ${problem.summary}`), { ...escaped(problem.details), stack })
        })
        cases = run.catch(() => {})
        return run
      },
    }),
  }
}

interface Problem {
  summary: string
  /** Rows as JSON, each list under its name. */
  details?: Record<string, readonly string[]>
}

/** Rows read back from the database are text the test did not write: escaped for TAP. */
const escaped = (details: Problem['details'] = {}) => Object.fromEntries(Object.entries(details).map(([name, rows]) => [name, rows.map((row) => assertionMessage(row))]))

async function check<Event extends DomainEvent>(
  db: Kysely<Database>,
  projection: Projection,
  options: { streamOf: (event: Event) => string; schemas: Record<string, TSchema> },
  history: readonly Event[],
  expected: ExpectedRows,
): Promise<Problem | undefined> {
  const foreign = Object.keys(expected).filter((table) => !projection.tables.includes(table as keyof Database & string))
  if (foreign.length > 0) return { summary: `${projection.name} does not write ${foreign.join(', ')}` }
  const recorded = record(history, options.streamOf)
  for (const [index, event] of recorded.entries()) {
    try {
      assertMatchesSchema(event, options.schemas)
    } catch (error) {
      return { summary: `given event ${index} (${event.type}) fails: ${describe(error)}` }
    }
    if (!projection.streamPrefixes.some((prefix) => event.stream.startsWith(prefix))) {
      return { summary: `given event ${index} (${event.type}) is on ${event.stream}, which ${projection.name} does not read` }
    }
  }

  const once = await applied(db, projection, recorded, 1)
  if ('problem' in once) return once.problem
  const twice = await applied(db, projection, recorded, 2)
  if ('problem' in twice) return twice.problem
  for (const table of projection.tables) {
    if (!isDeepStrictEqual(once.rows[table], twice.rows[table])) {
      return { summary: `applying each event twice leaves other rows in ${table} than applying it once`, details: { once: once.rows[table] ?? [], twice: twice.rows[table] ?? [] } }
    }
  }

  for (const [table, rows] of Object.entries(expected)) {
    const problem = await compareRows(db, table, rows ?? [])
    if (problem) return problem
  }
  return undefined
}

/** The events as the store records them: revisions per stream and positions from the start of the log. */
function record<Event extends DomainEvent>(history: readonly Event[], streamOf: (event: Event) => string): RecordedEvent[] {
  const revisions = new Map<string, bigint>()
  return history.map((event, index) => {
    const stream = streamOf(event)
    const revision = revisions.get(stream) ?? 0n
    revisions.set(stream, revision + 1n)
    const position = BigInt(index + 1)
    return {
      id: randomUUID(),
      type: event.type,
      data: event.data,
      metadata: { actor: 'test' },
      stream,
      revision,
      position: { commit: position, prepare: position },
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    }
  })
}

/** Empties the projection's tables, applies each event `times` times in a row, and reads every table it writes. */
async function applied(db: Kysely<Database>, projection: Projection, events: readonly RecordedEvent[], times: number): Promise<{ rows: Record<string, string[]> } | { problem: Problem }> {
  for (const table of projection.tables) await sql`truncate table ${sql.table(table)} cascade`.execute(db)
  for (const [index, event] of events.entries()) {
    for (let time = 1; time <= times; time++) {
      try {
        await db.transaction().execute((trx) => projection.apply(trx, event))
      } catch (error) {
        return { problem: { summary: `applying event ${index} (${event.type})${time > 1 ? ' again' : ''} threw ${describe(error)}` } }
      }
    }
  }
  const rows: Record<string, string[]> = {}
  for (const table of projection.tables) rows[table] = await readModelRows(db, table)
  return { rows }
}

async function compareRows(db: Kysely<Database>, table: string, expected: readonly Record<string, unknown>[]): Promise<Problem | undefined> {
  const columns = [...new Set(expected.flatMap((row) => Object.keys(row)))]
  const selected = columns.length > 0 ? sql.join(columns.map((column) => sql.ref(column))) : sql`1`
  const { rows } = await sql<Record<string, unknown>>`select ${selected} from ${countingRows(table)} as r`.execute(db)
  const canonical = (row: Record<string, unknown>) => JSON.stringify(Object.fromEntries(columns.map((column) => [column, plain(row[column])])))
  const actual = rows.map(canonical)
  const wanted = expected.map(canonical)
  const missing = without(wanted, actual)
  const unexpected = without(actual, wanted)
  if (missing.length === 0 && unexpected.length === 0) return undefined
  return {
    summary: `${table} holds ${actual.length} row${actual.length === 1 ? '' : 's'}, ${missing.length} expected missing, ${unexpected.length} unexpected`,
    details: { missing, unexpected },
  }
}

/** The items of `from` left after taking out one match in `taken` for each item of it. */
function without(from: readonly string[], taken: readonly string[]): string[] {
  const left = [...taken]
  return from.filter((item) => {
    const at = left.indexOf(item)
    if (at === -1) return true
    left.splice(at, 1)
    return false
  })
}

/** A column's value as a test writes it: timestamps as ISO 8601 UTC strings; object keys sorted, as a jsonb value's keys carry no order. */
function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, item]) => [key, plain(item)]))
  }
  return value
}

const describe = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))
