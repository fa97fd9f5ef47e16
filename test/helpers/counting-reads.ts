import type { EventStore } from '../../src/eventstore/port.js'

/** The store, with its stream reads counted (`counted.reads`); everything else passes through. */
export function countingReads(store: EventStore): { store: EventStore; counted: { reads: number } } {
  const counted = { reads: 0 }
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readStream') {
        return (...args: Parameters<EventStore['readStream']>) => {
          counted.reads++
          return target.readStream(...args)
        }
      }
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { store: proxy, counted }
}
