import { sql, type Selectable } from 'kysely'
import { comparePositions, type Position, type RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import { toBigInt, type DbOrTrx } from '../store/database.js'
import type { ParkedStreamsTable } from '../store/tables/parked-streams.js'
import { describeFailure } from './failures.js'

/**
 * A stream a log processor could not get past. Its events from `event` on wait, unprocessed by that
 * processor alone, until `flowd processors retry` replays them; every other stream goes on.
 */
export interface ParkedStream {
  processor: string
  stream: string
  /** The event that failed: the first of the stream the processor has not processed. */
  eventId: string
  eventType: string
  position: Position
  reason: string
  failures: number
  parkedAt: Date
}

/** Where a stream parks: the event, as a parked stream records it. */
export type ParkingEvent = Pick<RecordedEvent, 'id' | 'type' | 'stream' | 'position'>

/** The event a parked stream stopped at. */
export const parkedEvent = (parked: ParkedStream): ParkingEvent => ({ id: parked.eventId, type: parked.eventType, stream: parked.stream, position: parked.position })

/** Records that `processor` stops at `event` of its stream; parking it again keeps the first event. */
export async function parkStream(db: DbOrTrx, processor: string, event: ParkingEvent, reason: string, failures: number): Promise<void> {
  await db
    .insertInto('parked_streams')
    .values({
      processor,
      stream: event.stream,
      event_id: event.id,
      event_type: event.type,
      position_commit: String(event.position.commit),
      position_prepare: String(event.position.prepare),
      reason,
      failures,
    })
    .onConflict((oc) => oc.columns(['processor', 'stream']).doUpdateSet({ reason, failures: sql`parked_streams.failures + excluded.failures`, parked_at: sql`now()` }))
    .execute()
}

const toParkedStream = (row: Selectable<ParkedStreamsTable>): ParkedStream => ({
  processor: row.processor,
  stream: row.stream,
  eventId: row.event_id,
  eventType: row.event_type,
  position: { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) },
  reason: row.reason,
  failures: row.failures,
  parkedAt: new Date(row.parked_at as unknown as Date | string),
})

/** Parked streams, oldest first; of one processor when named. */
export async function listParked(db: DbOrTrx, processor?: string): Promise<ParkedStream[]> {
  let query = db.selectFrom('parked_streams').selectAll().orderBy('parked_at').orderBy('processor').orderBy('stream')
  if (processor !== undefined) query = query.where('processor', '=', processor)
  return (await query.execute()).map(toParkedStream)
}

/** `stream` as `processor` parked it; undefined when it is not parked. */
export async function findParked(db: DbOrTrx, processor: string, stream: string): Promise<ParkedStream | undefined> {
  const row = await db.selectFrom('parked_streams').selectAll().where('processor', '=', processor).where('stream', '=', stream).executeTakeFirst()
  return row && toParkedStream(row)
}

/** The processor's parked streams by name, each with where it stopped. */
export async function parkedStreamsOf(db: DbOrTrx, processor: string): Promise<Map<string, Position>> {
  return new Map((await listParked(db, processor)).map((parked) => [parked.stream, parked.position]))
}

/** Which of `streams` are still parked for `processor` (one may have been retried since it was read). */
export async function stillParked(db: DbOrTrx, processor: string, streams: readonly string[]): Promise<Set<string>> {
  if (streams.length === 0) return new Set()
  const rows = await db.selectFrom('parked_streams').select('stream').where('processor', '=', processor).where('stream', 'in', streams).execute()
  return new Set(rows.map((row) => row.stream))
}

/** Takes the stream off the processor's parked list; false when it was not on it. */
export async function unpark(db: DbOrTrx, processor: string, stream: string): Promise<boolean> {
  const result = await db.deleteFrom('parked_streams').where('processor', '=', processor).where('stream', '=', stream).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/**
 * The stream whose parking an event follows: its own, unless the processor keeps it in order with
 * another (the webhook outbox: a card event with the session it reports to).
 */
export type ParksWith = (event: RecordedEvent) => string

const ownStream: ParksWith = (event) => event.stream

/** The streams whose parking `event` waits behind: its own, and the one it parks with. */
const parkingStreamsOf = (event: RecordedEvent, parksWith: ParksWith): string[] => {
  const other = parksWith(event)
  return other === event.stream ? [event.stream] : [event.stream, other]
}

/** Whether `event` waits behind the parked event of its stream or of the one it parks with (the parked event itself included). */
export const waitsBehind = (parked: ReadonlyMap<string, Position>, event: RecordedEvent, parksWith: ParksWith = ownStream): boolean =>
  parked.size > 0 &&
  parkingStreamsOf(event, parksWith).some((stream) => {
    const from = parked.get(stream)
    return from !== undefined && comparePositions(event.position, from) >= 0
  })

/**
 * One processor's view of its parked streams: which events it must pass over, kept in step with
 * the table. Only the processor itself parks its streams, and it reads them all when it starts;
 * `flowd processors retry` takes them off the list from elsewhere, so a batch that meets a stream
 * known parked asks the table again before passing its events over.
 */
export class StreamParking {
  private parked = new Map<string, Position>()

  readonly processor: string
  private readonly logger: Logger
  private readonly metrics?: Metrics
  /** The stream an event parks and waits with. */
  readonly parksWith: ParksWith

  constructor(
    processor: string,
    logger: Logger,
    metrics?: Metrics,
    parksWith: ParksWith = ownStream,
  ) {
    this.processor = processor
    this.logger = logger
    this.metrics = metrics
    this.parksWith = parksWith
  }

  async load(db: DbOrTrx): Promise<void> {
    this.parked = await parkedStreamsOf(db, this.processor)
  }

  /** Whether some event of `batch` is of a stream known parked (then {@link refresh} before passing it over). */
  meets(batch: readonly RecordedEvent[]): boolean {
    return this.parked.size > 0 && batch.some((event) => parkingStreamsOf(event, this.parksWith).some((stream) => this.parked.has(stream)))
  }

  /** Forgets the streams of `batch` that have been retried since they were read. */
  async refresh(db: DbOrTrx, batch: readonly RecordedEvent[]): Promise<void> {
    const known = [...new Set(batch.flatMap((event) => parkingStreamsOf(event, this.parksWith)).filter((stream) => this.parked.has(stream)))]
    const still = await stillParked(db, this.processor, known)
    for (const stream of known) if (!still.has(stream)) this.parked.delete(stream)
  }

  /** Whether the processor passes over `event`: it waits behind its stream's parked event. */
  waits(event: RecordedEvent): boolean {
    return waitsBehind(this.parked, event, this.parksWith)
  }

  /** The events of `batch` the processor applies: those of streams not parked. */
  passable(batch: readonly RecordedEvent[]): RecordedEvent[] {
    return this.parked.size === 0 ? [...batch] : batch.filter((event) => !this.waits(event))
  }

  /**
   * Parks `event`'s stream, through `db` (the transaction that moves the processor past it, where
   * there is one). A stream known parked already only adds its failures to its row: it is counted
   * and logged once, however often it is tried again.
   */
  async park(db: DbOrTrx, event: ParkingEvent, error: unknown, failures: number): Promise<void> {
    const reason = describeFailure(error)
    await parkStream(db, this.processor, event, reason, failures)
    const known = this.parked.get(event.stream)
    this.parked.set(event.stream, known ?? event.position)
    if (known) return
    this.metrics?.streamsParked.inc({ processor: this.processor })
    this.logger.warn(
      { processor: this.processor, stream: event.stream, eventId: event.id, eventType: event.type, reason, failures },
      'stream parked after repeated failures on one event; every other stream goes on (flowd processors retry STREAM replays it)',
    )
  }

  /** Forgets a stream parked in a transaction that did not commit. */
  forget(stream: string): void {
    this.parked.delete(stream)
  }
}
