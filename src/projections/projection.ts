import type { Transaction } from 'kysely'
import type { RecordedEvent } from '../eventstore/port.js'
import type { Database } from '../store/database.js'

/**
 * One read model. `apply` must be idempotent SQL (upserts, or guards on what it already holds):
 * the runtime commits the checkpoint in the same transaction, so an event is applied once, but a
 * rebuild replays everything over truncated tables.
 */
export interface Projection {
  readonly name: string
  /** Streams it reads; the runtime subscribes with these prefixes. */
  readonly streamPrefixes: readonly string[]
  /** Tables it alone writes; a rebuild truncates them. */
  readonly tables: readonly (keyof Database & string)[]
  /** The event types `apply` acts on, when not every type of its streams: a write of other types does not wait for it. */
  readonly eventTypes?: readonly string[]
  apply(trx: Transaction<Database>, event: RecordedEvent): Promise<void>
  /** A batch in a few statements instead of one or more per event, with the same result as applying each in order. */
  applyBatch?(trx: Transaction<Database>, events: readonly RecordedEvent[]): Promise<void>
}

/** Applies a batch with the projection's own batch method, or event by event. */
export async function applyAll(trx: Transaction<Database>, projection: Projection, events: readonly RecordedEvent[]): Promise<void> {
  if (projection.applyBatch) return projection.applyBatch(trx, events)
  for (const event of events) await projection.apply(trx, event)
}

/**
 * A projection over the events of known types. The cast lives here, once: the streams a projection
 * reads only ever hold its events, each checked against its schema when appended.
 */
export function defineProjection<Event extends { type: string; data: unknown }>(spec: {
  name: string
  streamPrefixes: readonly string[]
  tables: readonly (keyof Database & string)[]
  eventTypes?: readonly Event['type'][]
  apply(trx: Transaction<Database>, event: Event, recorded: RecordedEvent): Promise<void>
  applyBatch?(trx: Transaction<Database>, events: readonly { event: Event; recorded: RecordedEvent }[]): Promise<void>
}): Projection {
  const { applyBatch } = spec
  return {
    ...spec,
    apply: (trx, recorded) => spec.apply(trx, recorded as unknown as Event, recorded),
    applyBatch: applyBatch && ((trx, events) => applyBatch(trx, events.map((recorded) => ({ event: recorded as unknown as Event, recorded })))),
  }
}
