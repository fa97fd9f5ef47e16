import { sql, type Kysely, type Transaction } from 'kysely'
import { START, comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { readAllThrough, readStreamThrough } from '../eventstore/postgres.js'
import { findParked, unpark } from '../processors/parked-streams.js'
import { toBigInt, type Database, type DbOrTrx } from '../store/database.js'
import { prepared } from '../store/prepared.js'
import { applyAll, type Projection } from './projection.js'

// A read model's checkpoint moves in the transaction (or the one statement) that writes what its
// events did, and only from where the reader left it: each event reaches the read model once,
// whatever crashes, however many processes read it.

export async function readCheckpoint(db: DbOrTrx, name: string): Promise<Position> {
  const row = await db.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).where('projection', '=', name).executeTakeFirst()
  return row ? { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) } : START
}

export async function writeCheckpoint(trx: Transaction<Database>, name: string, position: Position): Promise<void> {
  await trx
    .insertInto('projection_checkpoints')
    .values({ projection: name, position_commit: String(position.commit), position_prepare: String(position.prepare) })
    .onConflict((oc) =>
      oc.column('projection').doUpdateSet({
        position_commit: String(position.commit),
        position_prepare: String(position.prepare),
        updated_at: sql`now()`,
      }),
    )
    .execute()
}

export type BatchOutcome = { applied: true; position: Position } | { applied: false; position: Position }

/**
 * Writes events up to `reached` in one transaction with the checkpoint. The checkpoint moves first,
 * and only from where this reader started: if another process (or a rebuild) moved it, nothing is
 * written and the reader follows the stored position. The row lock the move takes serialises
 * readers of one projection, so each event reaches the read model once.
 */
export async function writeWithCheckpoint(
  db: Kysely<Database>,
  projection: Projection,
  from: Position,
  reached: Position,
  write: (trx: Transaction<Database>) => Promise<void>,
  { waitForFlush = true } = {},
): Promise<BatchOutcome> {
  return db.transaction().execute(async (trx) => {
    if (!waitForFlush) await sql`set local synchronous_commit = off`.execute(trx)
    // Prepared: every batch of every read model runs it.
    const [moved] = (await trx.executeQuery(prepared(moveCheckpoint(trx, projection.name, from, reached).compile()))).rows
    if (!moved) return notMoved(trx, projection.name)
    await write(trx)
    return { applied: true, position: reached }
  })
}

/** Moves a projection's checkpoint to `reached`, only from `from`; returns a row if it moved. */
const moveCheckpoint = (db: DbOrTrx, name: string, from: Position, reached: Position) =>
  db
    .updateTable('projection_checkpoints')
    .set({ position_commit: String(reached.commit), position_prepare: String(reached.prepare), updated_at: sql`now()` })
    .where('projection', '=', name)
    .where(sql<boolean>`(position_commit, position_prepare) = (${String(from.commit)}::bigint, ${String(from.prepare)}::bigint)`)
    .returning('projection')

/** The checkpoint was not where the reader left it: the reader follows the stored one. */
export async function notMoved(db: Kysely<Database> | Transaction<Database>, name: string): Promise<BatchOutcome> {
  // A projection's first batch ever: its row is made here, and the reader comes back from START.
  await insertCheckpointIfMissing(db, name)
  return { applied: false, position: await readCheckpoint(db, name) }
}

/**
 * A live batch with its checkpoint, which moves to `reached` (its last event or further on). When the projection's fold can put the whole write in one
 * statement, the checkpoint moves in that statement: one round trip where a transaction takes four
 * (begin, move, write, commit). The webhook outbox does, as every webhook waits on its batches.
 */
export async function applyLive(db: Kysely<Database>, projection: Projection, from: Position, batch: readonly RecordedEvent[], reached: Position): Promise<BatchOutcome> {
  const fold = projection.fold?.()
  if (!fold?.inOneStatement) return writeWithCheckpoint(db, projection, from, reached, (trx) => applyAll(trx, projection, batch, fold))
  await fold.add(db, batch)
  const parts = fold.inOneStatement(sql<boolean>`exists (select 1 from moved)`)
  if (!parts) return writeWithCheckpoint(db, projection, from, reached, (trx) => fold.write(trx))
  const statement = sql<{ moved: number }>`
    with moved as (${moveCheckpoint(db, projection.name, from, reached)})${sql.join(parts.map((part, index) => sql`, ${sql.id(`write_${index}`)} as (${part})`), sql``)}
    select count(*)::int as moved from moved`
  const [row] = (await db.executeQuery(prepared(statement.compile(db)))).rows
  return row?.moved ? { applied: true, position: reached } : notMoved(db, projection.name)
}

/**
 * Moves each checkpoint of `names` to `position` unless it is there or further already: for a
 * position several writers may save (the engine's, saved beside its batches) or that must never go
 * back. One statement of one text for any number of names.
 */
export async function advanceCheckpoints(db: DbOrTrx, names: readonly string[], position: Position): Promise<void> {
  const save = sql`insert into projection_checkpoints (projection, position_commit, position_prepare)
    select name, ${String(position.commit)}::bigint, ${String(position.prepare)}::bigint from unnest(${[...names]}::text[]) as name
    on conflict (projection) do update
      set position_commit = excluded.position_commit, position_prepare = excluded.position_prepare, updated_at = now()
      where (projection_checkpoints.position_commit, projection_checkpoints.position_prepare) < (excluded.position_commit, excluded.position_prepare)`
  // Prepared: the engine saves its checkpoints as its batches go, many times a second.
  await db.executeQuery(prepared(save.compile(db)))
}

/** The stored checkpoints of `names`, by name; a name without one is left out. */
export async function readCheckpoints(db: DbOrTrx, names: readonly string[]): Promise<Map<string, Position>> {
  if (names.length === 0) return new Map()
  const rows = await db.selectFrom('projection_checkpoints').select(['projection', 'position_commit', 'position_prepare']).where('projection', 'in', names).execute()
  return new Map(rows.map((row) => [row.projection, { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) }]))
}

export async function insertCheckpointIfMissing(db: Kysely<Database> | Transaction<Database>, name: string): Promise<void> {
  await db
    .insertInto('projection_checkpoints')
    .values({ projection: name, position_commit: String(START.commit), position_prepare: String(START.prepare) })
    .onConflict((oc) => oc.column('projection').doNothing())
    .execute()
}

/** Events the log scan of a retry reads at a time. */
const RETRY_SCAN_BATCH = 1000

/** A position before `position` and after every event before it: the exclusive start that reads `position` first. */
const justBefore = (position: Position): Position => ({ commit: position.commit, prepare: position.prepare - 1n })

/**
 * The events of `projection` from `from` through `through` that wait with the parked `stream`: its
 * own, and those of other streams that park with it, in log order.
 */
export async function eventsParkedWith(trx: Transaction<Database>, store: EventStore, projection: Projection, stream: string, from: Position, through: Position): Promise<RecordedEvent[]> {
  const within = (e: RecordedEvent) => comparePositions(e.position, from) >= 0 && comparePositions(e.position, through) <= 0
  const { parksWith } = projection
  if (!parksWith) {
    // Through the transaction where the log is in this database, so the stream is read as of the lock.
    return (store.kind === 'postgres' ? await readStreamThrough(trx, stream) : await store.readStream(stream)).filter(within)
  }
  // The log from the parked event through `through`, in batches, through the transaction where the
  // log is in this database (the embedded one has no other connection to read it on meanwhile).
  const { streamPrefixes } = projection
  const page = (after: Position) =>
    store.kind === 'postgres' ? readAllThrough(trx, { streamPrefixes, from: after, through, limit: RETRY_SCAN_BATCH }) : store.readAll({ streamPrefixes, from: after, limit: RETRY_SCAN_BATCH })
  const events: RecordedEvent[] = []
  for (let after = justBefore(from); ; ) {
    const batch = await page(after)
    events.push(...batch.filter((e) => within(e) && (e.stream === stream || parksWith(e) === stream)))
    if (batch.length < RETRY_SCAN_BATCH || comparePositions(batch.at(-1)!.position, through) >= 0) return events
    after = batch.at(-1)!.position
  }
}

/**
 * Replays a stream `projection` parked (`flowd processors retry`): its events from the parked one to
 * the checkpoint, applied in one transaction that holds the checkpoint's row, so the live reader's
 * next batch waits for it and then finds the stream off the list. False when it was not parked;
 * failing again, nothing changes and the error is thrown.
 */
export async function retryParkedStream(db: Kysely<Database>, store: EventStore, projection: Projection, stream: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const parked = await findParked(trx, projection.name, stream)
    if (!parked) return false
    await insertCheckpointIfMissing(trx, projection.name)
    const row = await trx.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).where('projection', '=', projection.name).forUpdate().executeTakeFirstOrThrow()
    const reached: Position = { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) }
    const events = await eventsParkedWith(trx, store, projection, stream, parked.position, reached)
    await applyAll(trx, projection, events)
    await unpark(trx, projection.name, stream)
    return true
  })
}
