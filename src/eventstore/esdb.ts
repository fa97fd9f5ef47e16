import { setTimeout as delay } from 'node:timers/promises'
import {
  ANY,
  AccessDeniedError,
  BACKWARDS,
  CancelledError,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  NotLeaderError,
  START as ESDB_START,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamRecordedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type CurrentRevision,
  type Direction,
  type Filter,
  type JSONType,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client'
import {
  START,
  EventStoreUnavailableError,
  WrongExpectedVersionError,
  comparePositions,
  matchesFilter,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type LogBatch,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamFilter,
  type SubscribeOptions,
} from './port.js'
import { PrefixHeads } from './prefix-heads.js'

export interface SubscriptionFailure {
  /** The pause before subscribing again. */
  retryInMs: number
  /** A failure that waiting does not mend (access denied, bad credentials, not the leader): the configuration must change. */
  permanent: boolean
}

export interface EsdbEventStoreOptions {
  /** An `esdb://` or `esdb+discover://` connection string. */
  connectionString: string
  /** Pause before resubscribing after a subscription failed or closed; default 500, doubling to 30 s while it keeps failing. */
  reconnectDelayMs?: number
  /** Told of each failed subscription (the service logs and counts it). */
  onSubscriptionError?: (error: unknown, failure: SubscriptionFailure) => void
}

/** The longest pause between resubscriptions while a subscription keeps failing. */
const MAX_RECONNECT_DELAY_MS = 30_000
/** Transient failures in a row after which a subscription makes the store not ready. */
const FAILURES_BEFORE_NOT_READY = 3
/**
 * Filtered subscriptions report their position every this many of the server's search windows
 * (32 events each): progress over other streams costs each subscriber a checkpoint write per 1,024 events.
 */
const CHECKPOINT_INTERVAL = 32
/** How old the heads that readiness and metrics read may be: their scrapes then never each read the log. */
const SHARED_HEADS_MAX_AGE_MS = 1_000
/** A repeat of an append at `any` revision is recognised among the stream's newest this many events. */
const ANY_REVISION_REPEAT_WINDOW = 100

/** What an EventStoreDB failure means to the service. */
export type EsdbFailureKind = 'conflict' | 'stream_not_found' | 'permanent' | 'transient' | 'other'

/**
 * Bad credentials reach the client as access denied (it maps gRPC UNAUTHENTICATED so). Not leader
 * comes from a node that is not the leader when the connection requires the leader: a string
 * naming a follower alone never passes; during an election the client finds the leader at the next try.
 */
export function esdbFailureKind(error: unknown): EsdbFailureKind {
  if (error instanceof EsdbWrongExpectedVersionError) return 'conflict'
  if (error instanceof StreamNotFoundError) return 'stream_not_found'
  if (error instanceof AccessDeniedError || error instanceof NotLeaderError) return 'permanent'
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof TimeoutError || error instanceof CancelledError) return 'transient'
  return 'other'
}

/** A failure in a few words: the client's error type (its errors are all named `Error`) and message. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const type = (error as { type?: unknown }).type
  const kind = typeof type === 'string' ? type : error.name
  return error.message ? `${kind}: ${error.message}` : kind
}

/** A client failure as the port's: a conflict as {@link WrongExpectedVersionError}, an unreachable server as {@link EventStoreUnavailableError}. */
export function toPortError(error: unknown, append?: { stream: string; expectedRevision: ExpectedRevision }): unknown {
  const kind = esdbFailureKind(error)
  if (kind === 'conflict' && append) {
    return new WrongExpectedVersionError(append.stream, append.expectedRevision, toActualRevision((error as EsdbWrongExpectedVersionError).actualVersion))
  }
  if (kind === 'transient') return new EventStoreUnavailableError((error as Error).message, { cause: error })
  return error
}

/** Runs a call to the server with its failures as the port's. */
async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw toPortError(error)
  }
}

const toEsdbRevision = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : expected

const toActualRevision = (current: CurrentRevision): bigint | 'no_stream' | 'unknown' =>
  current === NO_STREAM || current === -1n ? 'no_stream' : typeof current === 'bigint' && current >= 0n ? current : 'unknown'

const toReadPosition = (position: Position): ReadPosition =>
  position.commit < 0n ? ESDB_START : { commit: position.commit, prepare: position.prepare }

const isVisible = (stream: string, filter: StreamFilter): boolean => !stream.startsWith('$') && matchesFilter(stream, filter)

const toMetadata = (metadata: unknown): EventMetadata =>
  typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && !(metadata instanceof Uint8Array)
    ? { ...metadata }
    : {}

const toRecorded = (event: EsdbRecordedEvent): RecordedEvent => {
  if (!event.position) throw new Error('EventStoreDB did not report event positions (needs server 22.6 or later)')
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: toMetadata(event.metadata),
    stream: event.streamId,
    revision: event.revision,
    position: { commit: event.position.commit, prepare: event.position.prepare },
    createdAt: event.created.toISOString(),
  }
}

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const collected: T[] = []
  for await (const item of items) collected.push(item)
  return collected
}

/** What a subscription hands on: an event, or the server's word that it has read up to `checkpoint`. */
export type SubscriptionItem = { event?: AllStreamRecordedEvent } | { checkpoint: Position }

/**
 * A subscription's items as batches: events of the filter's streams (system streams left out),
 * handed on when `maxBatch` are gathered or nothing more is waiting (`waiting()`); a checkpoint
 * past the last batch is handed on as one without events, so the subscriber's checkpoint follows.
 * Nothing at or before `from`, or before an item already handed on, is handed on again.
 */
export async function* toLogBatches(
  items: AsyncIterable<SubscriptionItem>,
  { from, streamPrefixes, maxBatch, waiting }: { from: Position; streamPrefixes?: readonly string[]; maxBatch: number; waiting: () => number },
): AsyncGenerator<LogBatch> {
  let through = from
  let reached = from
  let events: RecordedEvent[] = []
  for await (const item of items) {
    const position = 'checkpoint' in item ? item.checkpoint : item.event?.position
    if (!position || comparePositions(position, reached) <= 0) continue
    reached = { commit: position.commit, prepare: position.prepare }
    if ('event' in item && item.event && isVisible(item.event.streamId, { streamPrefixes })) events.push(toRecorded(item.event))
    if (events.length >= maxBatch || (waiting() === 0 && (events.length > 0 || 'checkpoint' in item))) {
      yield { events, through: reached }
      through = reached
      events = []
    }
  }
  if (events.length > 0 || comparePositions(reached, through) > 0) yield { events, through: reached }
}

/** The server-side filter of a subscription, with its checkpoints put in line with its events. */
export function subscriptionFilter(streamPrefixes: readonly string[] | undefined): Filter {
  // Called while the subscription takes in the server's checkpoint message, after the events before it.
  const checkpointReached = (subscription: AllStreamSubscription, position: Position): void => {
    subscription.push({ checkpoint: position } satisfies SubscriptionItem)
  }
  const options = { checkpointInterval: CHECKPOINT_INTERVAL, checkpointReached }
  return streamPrefixes?.length ? streamNameFilter({ prefixes: [...streamPrefixes], ...options }) : excludeSystemEvents(options)
}

/**
 * The failing subscriptions of a store, for readiness: one failing for good, or transiently
 * {@link FAILURES_BEFORE_NOT_READY} times in a row, makes the store not ready until it subscribes again.
 */
export class SubscriptionHealth {
  private readonly failing = new Map<object, { error: unknown; failures: number; permanent: boolean }>()

  failed(subscriber: object, error: unknown, failures: number, permanent: boolean): void {
    this.failing.set(subscriber, { error, failures, permanent })
  }

  recovered(subscriber: object): void {
    this.failing.delete(subscriber)
  }

  /** Why the store is not ready, or undefined. */
  problem(): string | undefined {
    for (const { error, failures, permanent } of this.failing.values()) {
      if (!permanent && failures < FAILURES_BEFORE_NOT_READY) continue
      const reason = reasonOf(error)
      return permanent ? `subscription refused: ${reason}` : `subscription failed ${failures} times in a row: ${reason}`
    }
    return undefined
  }
}

/** The pause before the next subscription after `failures` failed in a row. */
export const retryDelay = (baseMs: number, failures: number): number => Math.min(baseMs * 2 ** Math.max(0, failures - 1), MAX_RECONNECT_DELAY_MS)

/**
 * The event store on EventStoreDB (22.6 or later). Positions are ESDB's `(commit, prepare)` log
 * positions. A repeated append of stored event ids answers with their original result, as on
 * Postgres: at an exact revision (or `no_stream`) the events after that revision are compared
 * when the server reports a conflict; at `any`, the stream's newest
 * {@link ANY_REVISION_REPEAT_WINDOW} events are looked through before appending.
 */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb' as const
  private readonly client: EventStoreDBClient
  private readonly reconnectDelayMs: number
  private readonly onSubscriptionError: (error: unknown, failure: SubscriptionFailure) => void
  private readonly health = new SubscriptionHealth()
  private readonly heads = new PrefixHeads(() => this.newestVisibleFirst())

  constructor(options: EsdbEventStoreOptions) {
    this.client = EventStoreDBClient.connectionString(options.connectionString)
    this.reconnectDelayMs = options.reconnectDelayMs ?? 500
    this.onSubscriptionError = options.onSubscriptionError ?? (() => {})
  }

  async append(stream: string, events: readonly NewEvent[], { expectedRevision }: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event')
    // At `any` the server recognises a repeat only while the ids are in its cache: look first.
    const earlier = expectedRevision === 'any' ? await this.findAlreadyAppended(stream, events, expectedRevision) : undefined
    if (earlier) return earlier
    try {
      const result = await this.appendOrConflict(stream, events, expectedRevision)
      this.heads.saw(stream, result.position)
      return result
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error
      const repeated = await this.findAlreadyAppended(stream, events, expectedRevision)
      if (repeated) return repeated
      throw error
    }
  }

  private async appendOrConflict(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const eventData = events.map(({ id, type, data, metadata }) =>
      // The client types data as object, array or string, yet writes any value with JSON.stringify.
      jsonEvent({ id, type, data: data as JSONType, metadata }),
    )
    let result
    try {
      result = await this.client.appendToStream(stream, eventData, { expectedRevision: toEsdbRevision(expectedRevision) })
    } catch (error) {
      throw toPortError(error, { stream, expectedRevision })
    }
    // Only reached when the connection string sets throwOnAppendFailure=false.
    if (!result.success) throw new WrongExpectedVersionError(stream, expectedRevision, 'unknown')
    const nextRevision = result.nextExpectedRevision
    // An idempotent repeat may come back without a position: take it from the stored event.
    return { nextRevision, position: result.position ?? (await this.positionOf(stream, nextRevision)) }
  }

  /**
   * The original result when every event of `events` is stored in `stream` already: right after
   * the expected revision, or (at `any`) among the stream's newest events. A partial overlap is no repeat.
   */
  private async findAlreadyAppended(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult | undefined> {
    const stored =
      expected === 'any'
        ? await this.readResolved(stream, { fromRevision: END, direction: BACKWARDS, maxCount: Math.max(events.length, ANY_REVISION_REPEAT_WINDOW) })
        : await this.readResolved(stream, { fromRevision: expected === 'no_stream' ? 0n : expected + 1n, direction: FORWARDS, maxCount: events.length })
    const byId = new Map(stored.map((event) => [event.id, event]))
    const repeated = events.map((event) => byId.get(event.id))
    if (repeated.some((event) => event === undefined)) return undefined
    const last = (repeated as RecordedEvent[]).reduce((a, b) => (a.revision > b.revision ? a : b))
    return { nextRevision: last.revision, position: last.position }
  }

  private async readResolved(stream: string, options: { fromRevision: bigint | typeof END; direction: Direction; maxCount?: number }): Promise<RecordedEvent[]> {
    try {
      const resolved = await collect(this.client.readStream(stream, options))
      return resolved.flatMap(({ event }) => (event ? [toRecorded(event)] : []))
    } catch (error) {
      if (esdbFailureKind(error) === 'stream_not_found') return []
      throw toPortError(error)
    }
  }

  private async positionOf(stream: string, revision: bigint): Promise<Position> {
    const [event] = await this.readResolved(stream, { fromRevision: revision, direction: FORWARDS, maxCount: 1 })
    if (!event) throw new Error(`stream ${stream}: revision ${revision} not found after append`)
    return event.position
  }

  async readStream(stream: string, options: { from?: bigint } = {}): Promise<RecordedEvent[]> {
    return this.readResolved(stream, { fromRevision: options.from ?? 0n, direction: FORWARDS })
  }

  async readAll({ from, limit, streamPrefixes }: ReadAllOptions): Promise<RecordedEvent[]> {
    const found: RecordedEvent[] = []
    if (limit <= 0) return found
    for await (const event of this.scanAll(FORWARDS, from.commit < 0n ? undefined : from, Math.min(limit + 1, 100), 1_000)) {
      if (!isVisible(event.streamId, { streamPrefixes })) continue
      found.push(toRecorded(event))
      if (found.length >= limit) break
    }
    return found
  }

  /**
   * Pages through $all strictly after (forwards) or before (backwards) `from`, or from the
   * respective end when it is undefined, the pages doubling from `firstPage` to `largestPage`.
   * Plain $all reads take no server-side filter in client 6.2, and the server may include the
   * event at the start position, hence the client-side comparison.
   */
  private async *scanAll(direction: Direction, from: Position | undefined, firstPage: number, largestPage: number): AsyncGenerator<AllStreamRecordedEvent> {
    const sign = direction === FORWARDS ? 1 : -1
    let cursor = from
    for (let pageSize = firstPage; ; pageSize = Math.min(pageSize * 2, largestPage)) {
      const fromPosition = cursor ? toReadPosition(cursor) : direction === FORWARDS ? ESDB_START : END
      // Read whole pages so an early stop by the caller never leaves a gRPC read open.
      const page = await mapped(() => collect(this.client.readAll({ direction, fromPosition, maxCount: pageSize })))
      for (const { event } of page) {
        if (!event || (cursor && comparePositions(event.position, cursor) * sign <= 0)) continue
        cursor = event.position
        yield event
      }
      if (page.length < pageSize) return
    }
  }

  private async *newestVisibleFirst(): AsyncGenerator<{ stream: string; position: Position }> {
    for await (const event of this.scanAll(BACKWARDS, undefined, 1, 1_000)) {
      if (isVisible(event.streamId, {})) yield { stream: event.streamId, position: { commit: event.position.commit, prepare: event.position.prepare } }
    }
  }

  /**
   * Filtered on the server by stream prefix (or system events left out), with its checkpoints, so
   * a subscriber moves on over stretches of other streams. A dropped subscription is not resumed
   * by the client: it subscribes again after the last position handed out.
   */
  async *subscribeAll({ from, streamPrefixes, signal, maxBatch = 500 }: SubscribeOptions): AsyncIterable<LogBatch> {
    const subscriber = {}
    let position = from
    let failures = 0
    try {
      while (!signal?.aborted) {
        // Room for a whole batch: a batch ends when nothing more waits, and the default room is 16.
        const subscription = this.client.subscribeToAll({ fromPosition: toReadPosition(position), filter: subscriptionFilter(streamPrefixes) }, { highWaterMark: maxBatch })
        const confirmed = (): void => {
          failures = 0
          this.health.recovered(subscriber)
        }
        subscription.once('confirmation', confirmed)
        const stop = (): void => {
          subscription.unsubscribe().catch(() => undefined)
          subscription.destroy()
        }
        signal?.addEventListener('abort', stop, { once: true })
        try {
          const items = subscription as AsyncIterable<SubscriptionItem>
          for await (const batch of toLogBatches(items, { from: position, streamPrefixes, maxBatch, waiting: () => subscription.readableLength })) {
            confirmed()
            position = batch.through
            for (const event of batch.events) this.heads.saw(event.stream, event.position)
            yield batch
          }
        } catch (error) {
          if (signal?.aborted) return
          failures++
          const permanent = esdbFailureKind(error) === 'permanent'
          this.health.failed(subscriber, error, failures, permanent)
          this.onSubscriptionError(error, { retryInMs: retryDelay(this.reconnectDelayMs, failures), permanent })
        } finally {
          signal?.removeEventListener('abort', stop)
          subscription.off('confirmation', confirmed)
          await subscription.unsubscribe().catch(() => undefined)
        }
        await delay(retryDelay(this.reconnectDelayMs, failures), undefined, { signal }).catch(() => undefined)
      }
    } finally {
      this.health.recovered(subscriber)
    }
  }

  /** EventStoreDB cannot count events cheaply. */
  async count(): Promise<undefined> {
    return undefined
  }

  /** Read after the call: the events appended before it count. */
  async headPosition(filter: StreamFilter = {}): Promise<Position> {
    const [head] = await this.heads.of([filter], 0)
    return head ?? START
  }

  /** Shared by the callers of a second (readiness, metrics), so their scrapes do not each read the log. */
  async headPositions(filters: readonly StreamFilter[]): Promise<Position[]> {
    return this.heads.of(filters, SHARED_HEADS_MAX_AGE_MS)
  }

  async ping(): Promise<void> {
    const problem = this.health.problem()
    if (problem) throw new Error(`EventStoreDB ${problem}`)
    await mapped(() => collect(this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })))
  }

  async close(): Promise<void> {
    await this.client.dispose()
  }
}
