import { setTimeout as delay } from 'node:timers/promises'
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START as ESDB_START,
  StreamNotFoundError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamRecordedEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  type Direction,
  type JSONType,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client'
import {
  START,
  WrongExpectedVersionError,
  comparePositions,
  matchesFilter,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamFilter,
  type SubscribeOptions,
} from './port.js'

export interface EsdbEventStoreOptions {
  /** An `esdb://` or `esdb+discover://` connection string. */
  connectionString: string
  /** Pause before resubscribing after a subscription failed or closed; default 500, doubling to 30 s while it keeps failing. */
  reconnectDelayMs?: number
  /** Told of each failed subscription (the service logs it: an access denied otherwise shows only as lag). */
  onSubscriptionError?: (error: unknown, retryInMs: number) => void
}

/** The longest pause between resubscriptions while a subscription keeps failing. */
const MAX_RECONNECT_DELAY_MS = 30_000

const toEsdbRevision = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : expected

const toActualRevision = (current: CurrentRevision): bigint | 'no_stream' | 'unknown' =>
  current === NO_STREAM || current === -1n ? 'no_stream' : current >= 0n ? current : 'unknown'

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

/**
 * The event store on EventStoreDB (22.6 or later). Positions are ESDB's `(commit, prepare)` log
 * positions. The server recognises a repeated append of the same event ids only in narrow cases
 * (at an exact expected revision, when the retry repeats that revision; with `any`, while the ids
 * are in its in-memory cache), so retries rely on the expected revision: every command appends at
 * an exact one, and a repeat then answers with the same outcome or a conflict, never a duplicate.
 */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb' as const
  private readonly client: EventStoreDBClient
  private readonly reconnectDelayMs: number
  private readonly onSubscriptionError: (error: unknown, retryInMs: number) => void

  constructor(options: EsdbEventStoreOptions) {
    this.client = EventStoreDBClient.connectionString(options.connectionString)
    this.reconnectDelayMs = options.reconnectDelayMs ?? 500
    this.onSubscriptionError = options.onSubscriptionError ?? (() => {})
  }

  async append(stream: string, events: readonly NewEvent[], { expectedRevision }: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event')
    const eventData = events.map(({ id, type, data, metadata }) =>
      // The client types data as object, array or string, yet writes any value with JSON.stringify.
      jsonEvent({ id, type, data: data as JSONType, metadata }),
    )
    let result
    try {
      result = await this.client.appendToStream(stream, eventData, { expectedRevision: toEsdbRevision(expectedRevision) })
    } catch (error) {
      if (error instanceof EsdbWrongExpectedVersionError) {
        throw new WrongExpectedVersionError(stream, expectedRevision, toActualRevision(error.actualVersion))
      }
      throw error
    }
    // Only reached when the connection string sets throwOnAppendFailure=false.
    if (!result.success) throw new WrongExpectedVersionError(stream, expectedRevision, 'unknown')
    const nextRevision = result.nextExpectedRevision
    // An idempotent repeat may come back without a position: take it from the stored event.
    return { nextRevision, position: result.position ?? (await this.positionOf(stream, nextRevision)) }
  }

  private async positionOf(stream: string, revision: bigint): Promise<Position> {
    const [resolved] = await collect(this.client.readStream(stream, { fromRevision: revision, maxCount: 1 }))
    if (!resolved?.event) throw new Error(`stream ${stream}: revision ${revision} not found after append`)
    return toRecorded(resolved.event).position
  }

  async readStream(stream: string, options: { from?: bigint } = {}): Promise<RecordedEvent[]> {
    try {
      const resolved = await collect(this.client.readStream(stream, { fromRevision: options.from ?? 0n, direction: FORWARDS }))
      return resolved.flatMap(({ event }) => (event ? [toRecorded(event)] : []))
    } catch (error) {
      if (error instanceof StreamNotFoundError) return []
      throw error
    }
  }

  async readAll({ from, limit, streamPrefixes }: ReadAllOptions): Promise<RecordedEvent[]> {
    const found: RecordedEvent[] = []
    if (limit <= 0) return found
    for await (const event of this.scanAll(FORWARDS, from.commit < 0n ? undefined : from, Math.max(limit + 1, 100))) {
      if (!isVisible(event.streamId, { streamPrefixes })) continue
      found.push(toRecorded(event))
      if (found.length >= limit) break
    }
    return found
  }

  /**
   * Pages through $all strictly after (forwards) or before (backwards) `from`, or from the
   * respective end when it is undefined. Plain $all reads take no server-side filter, and the
   * server may include the event at the start position, hence the client-side comparison.
   */
  private async *scanAll(direction: Direction, from: Position | undefined, pageSize: number): AsyncGenerator<AllStreamRecordedEvent> {
    const sign = direction === FORWARDS ? 1 : -1
    let cursor = from
    for (;;) {
      const fromPosition = cursor ? toReadPosition(cursor) : direction === FORWARDS ? ESDB_START : END
      // Read whole pages so an early stop by the caller never leaves a gRPC read open.
      const page = await collect(this.client.readAll({ direction, fromPosition, maxCount: pageSize }))
      for (const { event } of page) {
        if (!event || (cursor && comparePositions(event.position, cursor) * sign <= 0)) continue
        cursor = event.position
        yield event
      }
      if (page.length < pageSize) return
    }
  }

  async *subscribeAll({ from, streamPrefixes, signal, maxBatch = 500 }: SubscribeOptions): AsyncIterable<RecordedEvent[]> {
    const filter = streamPrefixes?.length ? streamNameFilter({ prefixes: [...streamPrefixes] }) : excludeSystemEvents()
    let position = from
    let failures = 0
    while (!signal?.aborted) {
      const subscription = this.client.subscribeToAll({ fromPosition: toReadPosition(position), filter })
      const stop = (): void => {
        subscription.unsubscribe().catch(() => undefined)
        subscription.destroy()
      }
      signal?.addEventListener('abort', stop, { once: true })
      try {
        let batch: RecordedEvent[] = []
        for await (const { event } of subscription) {
          if (event && isVisible(event.streamId, { streamPrefixes })) batch.push(toRecorded(event))
          if (batch.length > 0 && (batch.length >= maxBatch || subscription.readableLength === 0)) {
            position = batch[batch.length - 1]!.position
            failures = 0
            yield batch
            batch = []
          }
        }
      } catch (error) {
        // Dropped subscriptions are not resumed by the client: resubscribe after the last delivered event.
        if (signal?.aborted) return
        failures++
        this.onSubscriptionError(error, this.retryDelay(failures))
      } finally {
        signal?.removeEventListener('abort', stop)
        await subscription.unsubscribe().catch(() => undefined)
      }
      await delay(this.retryDelay(failures), undefined, { signal }).catch(() => undefined)
    }
  }

  /** The pause before the next subscription after `failures` failed in a row. */
  private retryDelay(failures: number): number {
    return Math.min(this.reconnectDelayMs * 2 ** Math.max(0, failures - 1), MAX_RECONNECT_DELAY_MS)
  }

  /** EventStoreDB cannot count events cheaply. */
  async count(): Promise<undefined> {
    return undefined
  }

  async headPosition(filter: StreamFilter = {}): Promise<Position> {
    for await (const event of this.scanAll(BACKWARDS, undefined, 32)) {
      if (isVisible(event.streamId, filter)) return { commit: event.position.commit, prepare: event.position.prepare }
    }
    return START
  }

  /** One backward scan for all the filters, until each has met its newest event. */
  async headPositions(filters: readonly StreamFilter[]): Promise<Position[]> {
    const heads: (Position | undefined)[] = filters.map(() => undefined)
    let open = filters.length
    if (open === 0) return []
    for await (const event of this.scanAll(BACKWARDS, undefined, 32)) {
      filters.forEach((filter, i) => {
        if (heads[i] || !isVisible(event.streamId, filter)) return
        heads[i] = { commit: event.position.commit, prepare: event.position.prepare }
        open--
      })
      if (open === 0) break
    }
    return heads.map((head) => head ?? START)
  }

  async ping(): Promise<void> {
    await collect(this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }))
  }

  async close(): Promise<void> {
    await this.client.dispose()
  }
}
