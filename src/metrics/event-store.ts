import type { EventStore } from '../eventstore/port.js'
import type { Metrics } from './registry.js'

/**
 * The event store with every successful append counted by event type: the one place all writes
 * (commands, engine, sweeper, kanban) pass through, whatever the adapter. An idempotent repeat
 * of an append is counted again, as the port does not say whether anything new was written.
 */
export function countingAppends(store: EventStore, metrics: Metrics): EventStore {
  return {
    get kind() {
      return store.kind
    },
    async append(stream, events, options) {
      const result = await store.append(stream, events, options)
      for (const event of events) metrics.eventsAppended.inc({ type: event.type })
      return result
    },
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    subscribeAll: (options) => store.subscribeAll(options),
    count: (filter) => store.count(filter),
    headPosition: (filter) => store.headPosition(filter),
    headPositions: (filters) => store.headPositions(filters),
    ping: () => store.ping(),
    close: () => store.close(),
  }
}
