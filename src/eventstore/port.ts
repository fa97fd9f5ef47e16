/**
 * The event-store port: one interface, implemented by the Postgres adapter (also used on PGlite)
 * and the EventStoreDB adapter. The shared contract suite in `test/eventstore` runs against each.
 */

/**
 * A place in the global order of all events. Both adapters use a pair compared lexicographically:
 * Postgres stores `(transaction_id, global_position)` (the gap rule), EventStoreDB its
 * `(commit, prepare)` position.
 */
export interface Position {
  readonly commit: bigint
  readonly prepare: bigint
}

/** Before every event: subscribing from here delivers the whole log. */
export const START: Position = Object.freeze({ commit: -1n, prepare: -1n })

export const comparePositions = (a: Position, b: Position): number =>
  a.commit !== b.commit ? (a.commit < b.commit ? -1 : 1) : a.prepare === b.prepare ? 0 : a.prepare < b.prepare ? -1 : 1

export const positionToString = (p: Position): string => `${p.commit}/${p.prepare}`

export interface EventMetadata {
  correlationId?: string
  causationId?: string
  /** Who caused the event: an API key id, an OAuth client id, `system`, `engine`, … */
  actor?: string
  workspaceId?: string
  [key: string]: unknown
}

/** An event about to be appended. `id` makes appends idempotent: a retried command reuses it. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  id: string
  type: Type
  data: Data
  metadata?: EventMetadata
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  id: string
  type: Type
  data: Data
  metadata: EventMetadata
  stream: string
  /** Zero-based position of the event within its stream. */
  revision: bigint
  position: Position
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string
}

/**
 * `no_stream`: the stream must not exist yet. `any`: no check. A bigint: the revision of the
 * stream's last event must be exactly this.
 */
export type ExpectedRevision = 'no_stream' | 'any' | bigint

export interface AppendResult {
  /** Revision of the last event written (or, for an idempotent repeat, already written). */
  nextRevision: bigint
  position: Position
}

export class WrongExpectedVersionError extends Error {
  override readonly name = 'WrongExpectedVersionError'
  readonly stream: string
  readonly expected: ExpectedRevision
  readonly actual: bigint | 'no_stream' | 'unknown'

  constructor(
    stream: string,
    expected: ExpectedRevision,
    actual: bigint | 'no_stream' | 'unknown',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, found ${String(actual)}`)
    this.stream = stream
    this.expected = expected
    this.actual = actual
  }
}

/** The store could not be reached or did not answer in time: retried like a database that is away. */
export class EventStoreUnavailableError extends Error {
  override readonly name = 'EventStoreUnavailableError'
}

export interface StreamFilter {
  /** Only events whose stream name starts with one of these. Absent or empty: every stream. */
  streamPrefixes?: readonly string[]
}

export interface SubscribeOptions extends StreamFilter {
  /** Exclusive: delivery starts with the first event after this position. */
  from: Position
  /** Ends the subscription; the iterator then returns. */
  signal?: AbortSignal
  /** Largest batch handed out at once. */
  maxBatch?: number
}

/**
 * What a subscription hands out: events in global order, and how far the log was read for the
 * subscriber. `through` is the last event's position or further on, when the store has looked past
 * events of other streams; `events` is empty when a store reports only such progress.
 */
export interface LogBatch {
  events: RecordedEvent[]
  through: Position
}

export interface ReadAllOptions extends StreamFilter {
  /** Exclusive. */
  from: Position
  limit: number
}

export interface EventStore {
  readonly kind: 'postgres' | 'esdb'

  /** Appends atomically. Throws {@link WrongExpectedVersionError} when the revision check fails. */
  append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult>

  /** Events of one stream in revision order, from revision `from` (inclusive, default 0). */
  readStream(stream: string, options?: { from?: bigint }): Promise<RecordedEvent[]>

  /** One page of the global log, in global order, holding only events that can no longer be preceded by a later commit. */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>

  /**
   * Catch-up then live subscription to the global log, batch by batch in global order; a subscriber
   * saves `through` as its checkpoint, also for a batch without events. Survives lost connections
   * by resuming after the last position handed out; ends when `signal` aborts.
   */
  subscribeAll(options: SubscribeOptions): AsyncIterable<LogBatch>

  /** Number of events matching the filter, for progress reporting; undefined when the store cannot tell cheaply. */
  count(filter?: StreamFilter): Promise<number | undefined>

  /** Position of the newest event matching the filter that a reader can see now; {@link START} when there is none. */
  headPosition(filter?: StreamFilter): Promise<Position>

  /**
   * {@link headPosition} of each filter, in the order given, as one call: on Postgres one statement
   * whatever the number of filters (readiness asks it for every read model at once). On
   * EventStoreDB the answer may be up to a second old, shared by the callers of that second.
   */
  headPositions(filters: readonly StreamFilter[]): Promise<Position[]>

  /** Throws when the store cannot be reached, or its subscriptions in this process keep failing (the message says why). */
  ping(): Promise<void>

  close(): Promise<void>
}

/** The prefixes of a filter; `''` stands for every stream. */
export const prefixesOf = (filter: StreamFilter): readonly string[] => (filter.streamPrefixes?.length ? filter.streamPrefixes : [''])

/** Each filter's head from the heads of single prefixes ({@link prefixesOf}): the newest of its prefixes' heads. */
export const headsOfFilters = (filters: readonly StreamFilter[], headOfPrefix: ReadonlyMap<string, Position>): Position[] =>
  filters.map((filter) =>
    prefixesOf(filter)
      .map((prefix) => headOfPrefix.get(prefix) ?? START)
      .reduce((newest, head) => (comparePositions(head, newest) > 0 ? head : newest), START),
  )

export const matchesFilter = (stream: string, filter: StreamFilter): boolean =>
  !filter.streamPrefixes?.length || filter.streamPrefixes.some((prefix) => stream.startsWith(prefix))
