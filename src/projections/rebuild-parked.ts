import type { Transaction } from 'kysely'
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import { waitsBehind } from '../processors/parked-streams.js'
import type { Database } from '../store/database.js'
import { eventsParkedWith } from './checkpoints.js'
import { applyAll, type Projection } from './projection.js'

// A rebuild passes over a parked stream's waiting events, as a live reader does. `flowd processors
// retry` may replay such a stream into the live tables while the rebuild runs (or as it starts):
// those tables are dropped at the swap, so the swap replays it into the new ones, under the live
// checkpoint's lock, which the retry holds while it replays. The two take turns on that lock, so
// each retried event reaches the swapped-in tables once.

/**
 * The streams a rebuild has passed over, each from the event it was parked at. Once passed over, a
 * stream stays passed over until the swap, even if it is retried meanwhile: the swap then knows
 * exactly which of its events the new tables lack.
 */
export class PassedOverStreams {
  private readonly streams: Map<string, Position>
  private readonly projection: Projection

  constructor(projection: Projection, parkedAtStart: ReadonlyMap<string, Position>) {
    this.projection = projection
    this.streams = new Map(parkedAtStart)
  }

  /** Adds the streams parked now that were not passed over yet (a live reader parked them since). */
  note(parkedNow: ReadonlyMap<string, Position>): void {
    for (const [stream, at] of parkedNow) if (!this.streams.has(stream)) this.streams.set(stream, at)
  }

  /** Whether the rebuild passes over `event`. */
  passes(event: RecordedEvent): boolean {
    return waitsBehind(this.streams, event, this.projection.parksWith)
  }

  /**
   * In the swap's transaction, which holds the live checkpoint: replays into the new tables each
   * passed-over stream that has been retried since, from where it was passed over through `through`
   * (where the swap leaves the checkpoint), but for the events still parked (a stream retried and
   * parked again further on). `liveAt` is the live checkpoint: the events after it have their effects
   * outside the tables made here, as the live reader will not apply them. Returns the events applied.
   */
  async carryRetried(trx: Transaction<Database>, store: EventStore, projection: Projection, parkedNow: ReadonlyMap<string, Position>, liveAt: Position, through: Position): Promise<number> {
    let applied = 0
    for (const [stream, from] of this.streams) {
      const still = parkedNow.get(stream)
      if (still && comparePositions(still, from) === 0) continue
      const events = (await eventsParkedWith(trx, store, projection, stream, from, through)).filter((e) => !waitsBehind(parkedNow, e, projection.parksWith))
      if (events.length === 0) continue
      await applyAll(trx, projection, events, projection.fold?.({ appliedBefore: liveAt }))
      applied += events.length
    }
    return applied
  }
}
