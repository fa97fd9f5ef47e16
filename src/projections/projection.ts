import { sql, type RawBuilder, type Transaction } from 'kysely'
import type { Position, RecordedEvent } from '../eventstore/port.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { ParksWith } from '../processors/parked-streams.js'

/**
 * Events folded in memory, then written in a few statements. A live batch is one fold; a rebuild
 * folds a window of many batches, so a row that the window touches again and again (a session's
 * log, its analytics) is written once; one event alone is a fold of one. However the events are
 * cut into folds, they must leave the same rows (test/projections/batch-equivalence.test.ts).
 */
export interface Fold {
  /** Folds the events in, reading through `db` the stored rows it builds on; writes nothing. */
  add(db: DbOrTrx, events: readonly RecordedEvent[]): Promise<void>
  /** Rows held for writing: a rebuild writes its window before this grows past its bound. */
  readonly rowsHeld: number
  write(trx: Transaction<Database>): Promise<void>
  /**
   * The same write as the parts of one statement (data-modifying, each changing nothing unless
   * `checkpointMoved` holds), or undefined when this fold's rows cannot be put so. A live batch is then
   * written in one statement with its checkpoint's move. A fold offering this is folded before
   * the move, so its `add` reads nothing stored.
   */
  inOneStatement?(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined
}

export interface FoldOptions {
  /**
   * A rebuild's replay: the projection's checkpoint before the rebuild emptied its tables. What it
   * wrote outside them for events up to there (the outbox's deliveries, which survive a rebuild)
   * exists already.
   */
  appliedBefore?: Position
  /**
   * A rebuild's window still being written as this one folds: the rows it leaves are in it, not yet
   * in the tables. A fold that reads stored rows reads those from it.
   */
  writing?: Fold
}

/**
 * One read model. `apply` must be idempotent SQL (upserts, or guards on what it already holds):
 * the runtime commits the checkpoint in the same transaction, so an event is applied once, but a
 * rebuild replays everything over truncated tables. A projection with a fold applies an event as
 * the fold of that one event.
 */
export interface Projection {
  readonly name: string
  /** Streams it reads; the runtime subscribes with these prefixes. */
  readonly streamPrefixes: readonly string[]
  /** Tables it alone writes; a rebuild truncates them. */
  readonly tables: readonly (keyof Database & string)[]
  /** The event types `apply` acts on, when not every type of its streams: a write of other types does not wait for it. */
  readonly eventTypes?: readonly string[]
  /**
   * On the way from a message to its webhook (the outbox): each batch is applied as soon as it is
   * read. Every other projection gathers events between batches while nobody waits for it
   * (src/projections/runtime.ts).
   */
  readonly onWebhookPath?: boolean
  /**
   * The stream an event parks and waits with, when not its own (src/processors/parked-streams.ts):
   * a stream parked holds the events of other streams that must not overtake its own.
   */
  readonly parksWith?: ParksWith
  apply(trx: Transaction<Database>, event: RecordedEvent): Promise<void>
  /** Folds batches to write them in a few statements instead of one or more per event. */
  fold?(options?: FoldOptions): Fold
}

/** Applies a batch with the projection's fold (a fresh one unless given), or event by event. */
export async function applyAll(trx: Transaction<Database>, projection: Projection, events: readonly RecordedEvent[], fold = projection.fold?.()): Promise<void> {
  if (!fold) {
    for (const event of events) await projection.apply(trx, event)
    return
  }
  await fold.add(trx, events)
  await fold.write(trx)
}

/** A fold over the events of known types (see {@link defineProjection}). */
export interface TypedFold<Event> {
  add(db: DbOrTrx, events: readonly { event: Event; recorded: RecordedEvent }[]): Promise<void>
  readonly rowsHeld: number
  write(trx: Transaction<Database>): Promise<void>
  inOneStatement?(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined
}

/**
 * A projection over the events of known types, written event by event (`apply`) or in folds
 * (`fold`), each event then being the fold of one: its effect is written in one place. The cast
 * lives here, once: the streams a projection reads only ever hold its events, each checked against
 * its schema when appended.
 */
export function defineProjection<Event extends { type: string; data: unknown }>(
  spec: {
    name: string
    streamPrefixes: readonly string[]
    tables: readonly (keyof Database & string)[]
    eventTypes?: readonly Event['type'][]
    onWebhookPath?: boolean
    parksWith?: ParksWith
  } & (
    | { apply(trx: Transaction<Database>, event: Event, recorded: RecordedEvent): Promise<void>; fold?: never }
    | { fold(options: TypedFoldOptions<Event>): TypedFold<Event>; apply?: never }
  ),
): Projection {
  const { apply, fold, ...shared } = spec
  if (!fold) return { ...shared, apply: (trx, recorded) => apply(trx, recorded as unknown as Event, recorded) }
  const typedFolds = new WeakMap<Fold, TypedFold<Event>>()
  const projection: Projection = {
    ...shared,
    apply: (trx, recorded) => applyAll(trx, projection, [recorded]),
    fold: ({ writing, ...options } = {}) => {
      const typed = fold({ ...options, writing: writing && typedFolds.get(writing) })
      const untyped: Fold = {
        add: (db, events) => typed.add(db, events.map((recorded) => ({ event: recorded as unknown as Event, recorded }))),
        get rowsHeld() {
          return typed.rowsHeld
        },
        write: (trx) => typed.write(trx),
        ...(typed.inOneStatement && { inOneStatement: (checkpointMoved) => typed.inOneStatement!(checkpointMoved) }),
      }
      typedFolds.set(untyped, typed)
      return untyped
    },
  }
  return projection
}

/** {@link FoldOptions} for a fold over the events of known types: the window being written is one of its own. */
export type TypedFoldOptions<Event> = Omit<FoldOptions, 'writing'> & { writing?: TypedFold<Event> }

/** The condition of a fold's statement written on its own, not as a part of its checkpoint's (see {@link Fold.inOneStatement}). */
export const ALWAYS = sql<boolean>`true`

/** Rows a statement of a fold's write takes at most: a window's rows go in several, to bound the text each one builds. */
export const ROWS_PER_STATEMENT = 5_000

/** PostgreSQL's limit on a statement's parameters, less a margin for the statement's own. */
const MAX_PARAMETERS = 65_000

/** Consecutive slices of `rows` of at most `size` rows each. */
export function slices<Row>(rows: Iterable<Row>, size: number = ROWS_PER_STATEMENT): Row[][] {
  const all = Array.isArray(rows) ? (rows as Row[]) : [...rows]
  const sliced: Row[][] = []
  for (let from = 0; from < all.length; from += size) sliced.push(all.slice(from, from + size))
  return sliced
}

/** Runs `write` over consecutive slices of `rows` of at most `size` rows each. */
export async function inChunks<Row>(rows: Iterable<Row>, size: number, write: (chunk: Row[]) => Promise<unknown>): Promise<void> {
  for (const slice of slices(rows, size)) await write(slice)
}

/**
 * Runs a multi-row insert of plain values (one parameter per column) over consecutive slices of
 * `rows`, each within a statement's parameter limit and ROWS_PER_STATEMENT.
 */
export async function insertInChunks<Row extends object>(rows: readonly Row[], insert: (chunk: Row[]) => Promise<unknown>): Promise<void> {
  if (rows.length === 0) return
  await inChunks(rows, Math.min(ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length)), insert)
}

/**
 * A fold whose rows are only ever inserted, each once (`on conflict do nothing` on their key): no
 * part of its write depends on another, so a live batch is written in one statement with its
 * checkpoint's move. A subclass folds events into `rows` and says how a slice of them is inserted.
 */
export abstract class InsertOnlyFold<Event, Row> implements TypedFold<Event> {
  protected readonly rows: Row[] = []

  get rowsHeld(): number {
    return this.rows.length
  }

  abstract add(db: DbOrTrx, events: readonly { event: Event; recorded: RecordedEvent }[]): Promise<void>

  /** The insert of `rows` (at most ROWS_PER_STATEMENT), writing nothing unless `onlyIf` holds. */
  protected abstract insert(rows: readonly Row[], onlyIf: RawBuilder<boolean>): RawBuilder<unknown>

  async write(trx: Transaction<Database>): Promise<void> {
    for (const part of this.parts(ALWAYS)) await part.execute(trx)
  }

  /** Most batches hold no such row, and move the checkpoint alone. */
  inOneStatement(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined {
    if (this.rows.length > ROWS_PER_STATEMENT) return undefined
    return this.parts(checkpointMoved)
  }

  private parts(onlyIf: RawBuilder<boolean>): RawBuilder<unknown>[] {
    return slices(this.rows).map((rows) => this.insert(rows, onlyIf))
  }
}

/** The writes of consecutive events, merged (one row written once however many of them change it). */
export interface MergedWrites {
  readonly rowsHeld: number
  write(trx: Transaction<Database>): Promise<void>
  /** See {@link Fold.inOneStatement}. */
  inOneStatement?(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined
}

/**
 * A fold's writes in the order of its events: runs of events whose writes merge, and between them
 * the writes of events that must see what comes before them written (a pipeline change, a card
 * event that reads its session's route), made on their own, in their place.
 */
export class WritesInOrder<S extends MergedWrites, InPlace> {
  private readonly steps: ({ merged: S } | { inPlace: InPlace })[] = []
  private current: S | undefined
  private inPlaceCount = 0

  private readonly newMerged: () => S
  private readonly writeInPlace: (trx: Transaction<Database>, inPlace: InPlace) => Promise<void>

  constructor(newMerged: () => S, writeInPlace: (trx: Transaction<Database>, inPlace: InPlace) => Promise<void>) {
    this.newMerged = newMerged
    this.writeInPlace = writeInPlace
  }

  get rowsHeld(): number {
    return this.steps.reduce((sum, step) => sum + ('merged' in step ? step.merged.rowsHeld : 0), this.inPlaceCount)
  }

  /** The merged writes that events go into now. */
  merging(): S {
    if (!this.current) this.steps.push({ merged: (this.current = this.newMerged()) })
    return this.current
  }

  /** Writes `inPlace` on its own at write time, after the merged writes before it; the next events merge anew. */
  addInPlace(inPlace: InPlace): void {
    this.steps.push({ inPlace })
    this.current = undefined
    this.inPlaceCount++
  }

  /** The write in one statement (see {@link Fold.inOneStatement}): only of one run of merged writes, with nothing written in place. */
  inOneStatement(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined {
    const [only, ...more] = this.steps
    if (!only) return []
    if (more.length > 0 || !('merged' in only)) return undefined
    return only.merged.inOneStatement?.(checkpointMoved)
  }

  async write(trx: Transaction<Database>): Promise<void> {
    for (const step of this.steps) {
      if ('merged' in step) await step.merged.write(trx)
      else await this.writeInPlace(trx, step.inPlace)
    }
  }
}
