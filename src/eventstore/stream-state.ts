import type { Decider, DomainEvent } from '../domain/decider.js'
import type { EventStore } from './port.js'
import { BoundedMap } from '../bounded-map.js'

/** A stream's events folded by its decider, and the revision of the last one (undefined: no stream yet). */
export interface FoldedStream<State> {
  state: State
  revision: bigint | undefined
}

interface Entry {
  decider: Decider<unknown, unknown, DomainEvent>
  folded: FoldedStream<unknown>
}

/** Streams kept folded per store; the least recently used go first. */
const CAPACITY = 10_000
const caches = new WeakMap<EventStore, BoundedMap<string, Entry>>()

function cacheOf(store: EventStore): BoundedMap<string, Entry> {
  let cache = caches.get(store)
  if (!cache) caches.set(store, (cache = new BoundedMap(CAPACITY)))
  return cache
}

/**
 * The stream's current state. Streams only grow and states are immutable, so a state folded
 * earlier is brought up to date by reading just the events appended since: a busy session no
 * longer re-reads its whole history for every message.
 */
export async function foldStream<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  /**
   * The caller already knows the stream up to this revision (it read those events itself): a kept
   * state that far on is taken without asking the store. It may then miss newer events; a write
   * based on it fails its expected revision, and the caller reads again.
   */
  { alreadyReadThrough }: { alreadyReadThrough?: bigint } = {},
): Promise<FoldedStream<State>> {
  const entry = cacheOf(store).get(stream)
  const known = entry?.decider === decider ? (entry.folded as FoldedStream<State>) : { state: decider.initialState, revision: undefined }
  if (alreadyReadThrough !== undefined && known.revision !== undefined && known.revision >= alreadyReadThrough) return known
  const newer = await store.readStream(stream, { from: known.revision === undefined ? 0n : known.revision + 1n })
  const folded = newer.length === 0 ? known : {
    state: newer.reduce((state, e) => decider.evolve(state, { type: e.type, data: e.data } as Event), known.state),
    revision: newer[newer.length - 1]!.revision,
  }
  rememberFolded(store, decider, stream, folded)
  return folded
}

/** The state kept for the stream by this process, if any, without asking the store: it may be behind. */
export function keptState<Command, State, Event extends DomainEvent>(store: EventStore, decider: Decider<Command, State, Event>, stream: string): FoldedStream<State> | undefined {
  const entry = caches.get(store)?.get(stream)
  return entry?.decider === decider ? (entry.folded as FoldedStream<State>) : undefined
}

/** Keeps a state the caller folded itself (after its own append), so the next load reads nothing. */
export function rememberFolded<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  folded: FoldedStream<State>,
): void {
  const cache = cacheOf(store)
  cache.delete(stream)
  if (folded.revision === undefined) return
  cache.set(stream, { decider: decider as Decider<unknown, unknown, DomainEvent>, folded })
}
