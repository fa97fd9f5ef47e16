import { createRequire } from 'node:module'
import { Readable } from 'node:stream'
import t from 'tap'
import type { AllStreamRecordedEvent, AllStreamSubscription, Filter } from '@eventstore/db-client'
import { subscriptionFilter, toLogBatches, type SubscriptionItem } from '../../src/eventstore/esdb.js'
import { positionToString, type LogBatch, type Position } from '../../src/eventstore/port.js'

// How an EventStoreDB subscription's events and checkpoints become batches, without a server: the
// items are given as the client hands them on, and the client's own subscription stream is fed
// answers shaped as a server's. The contract suite (test/eventstore/esdb.test.ts, with
// EVENTSTORE_CONNECTION_STRING set) is the check against a real server.

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

const recorded = (stream: string, n: number): AllStreamRecordedEvent =>
  ({ id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, type: 'Happened', data: { n }, metadata: {}, streamId: stream, revision: 0n, position: at(n), created: new Date(0), isJson: true }) as unknown as AllStreamRecordedEvent

const event = (stream: string, n: number): SubscriptionItem => ({ event: recorded(stream, n) })
const checkpoint = (n: number): SubscriptionItem => ({ checkpoint: at(n) })

/**
 * What `toLogBatches` hands out for items arriving in groups: the items of a group wait all at once,
 * as a subscription catching up holds them; the next group comes once they are taken (live).
 */
async function batchesOf(arrivals: SubscriptionItem[][], options: { from?: Position; streamPrefixes?: string[]; maxBatch?: number } = {}) {
  let waiting = 0
  async function* source() {
    for (const arrival of arrivals) {
      waiting = arrival.length
      for (const item of arrival) {
        waiting--
        yield item
      }
    }
  }
  const batches: { events: number[]; through: string }[] = []
  for await (const batch of toLogBatches(source(), { from: options.from ?? at(0), streamPrefixes: options.streamPrefixes, maxBatch: options.maxBatch ?? 100, waiting: () => waiting })) {
    batches.push(summary(batch))
  }
  return batches
}

const summary = (batch: LogBatch) => ({ events: batch.events.map((e) => Number(e.position.commit)), through: positionToString(batch.through) })

t.test('a checkpoint with nothing waiting after it ends the batch there', async (t) => {
  t.same(await batchesOf([[event('card-1', 1), event('card-2', 2), checkpoint(40)], [event('card-3', 41)]]), [
    { events: [1, 2], through: '40/40' },
    { events: [41], through: '41/41' },
  ])
})

t.test('while more items wait, a checkpoint carries the batch on instead of ending it', async (t) => {
  t.same(await batchesOf([[event('card-1', 1), checkpoint(40), event('card-3', 41), checkpoint(1024)]]), [{ events: [1, 41], through: '1024/1024' }])
})

t.test('a checkpoint over a stretch of other streams is a batch without events, so the checkpoint moves', async (t) => {
  t.same(await batchesOf([[event('card-1', 1)], [checkpoint(1024)], [checkpoint(2048)]]), [
    { events: [1], through: '1/1' },
    { events: [], through: '1024/1024' },
    { events: [], through: '2048/2048' },
  ])
})

t.test('a checkpoint at or before where the subscriber is hands out nothing', async (t) => {
  t.same(await batchesOf([[checkpoint(5)], [event('card-1', 7)], [checkpoint(7)], [checkpoint(6)]], { from: at(5) }), [{ events: [7], through: '7/7' }])
})

t.test('events are gathered up to maxBatch while more wait', async (t) => {
  t.same(await batchesOf([[1, 2, 3, 4, 5].map((n) => event('card-1', n))], { maxBatch: 2 }), [
    { events: [1, 2], through: '2/2' },
    { events: [3, 4], through: '4/4' },
    { events: [5], through: '5/5' },
  ])
})

t.test('events of system streams and of other prefixes are left out, and passed', async (t) => {
  t.same(await batchesOf([[event('$stats-1', 1), event('card-1', 2), event('session-1', 3), event('$$card-1', 4)]], { streamPrefixes: ['card-'] }), [{ events: [2], through: '4/4' }])
})

t.test('nothing at or before `from` is handed out again', async (t) => {
  t.same(await batchesOf([[event('card-1', 3), event('card-1', 4), event('card-1', 5)]], { from: at(4) }), [{ events: [5], through: '5/5' }])
})

interface ClientSubscription extends AllStreamSubscription {
  readableLength: number
}
type SubscriptionConstructor = new (
  createGRPCStream: () => Promise<Readable & { cancel(): void }>,
  convertGrpcEvent: (event: unknown) => unknown,
  options: object,
  checkpointReached?: Filter['checkpointReached'],
) => ClientSubscription

/** The client's own subscription stream (not exported by the package: loaded from its file). */
const { Subscription } = createRequire(import.meta.url)('@eventstore/db-client/dist/streams/utils/Subscription.js') as { Subscription: SubscriptionConstructor }

/** A server's answers as the client reads them off gRPC: an event, or a checkpoint message. */
const eventAnswer = (stream: string, n: number) => ({ hasEvent: () => true, getEvent: () => ({ event: recorded(stream, n) }) })
const checkpointAnswer = (n: number) => ({
  hasEvent: () => false,
  hasCheckpoint: () => true,
  getCheckpoint: () => ({ getCommitPosition: () => String(n), getPreparePosition: () => String(n) }),
})

t.test("the client's subscription hands the checkpoints on in line with its events", async (t) => {
  const answers = () => [eventAnswer('card-1', 1), eventAnswer('card-1', 2), checkpointAnswer(1024), eventAnswer('card-2', 1025), checkpointAnswer(2048)]
  const subscribe = () => new Subscription(async () => Object.assign(Readable.from(answers()), { cancel: () => {} }), (answer) => answer, {}, subscriptionFilter(['card-']).checkpointReached)

  const items: string[] = []
  for await (const item of subscribe() as AsyncIterable<SubscriptionItem>) {
    items.push('checkpoint' in item ? `checkpoint ${positionToString(item.checkpoint)}` : `event ${positionToString(item.event!.position)}`)
  }
  t.same(items, ['event 1/1', 'event 2/2', 'checkpoint 1024/1024', 'event 1025/1025', 'checkpoint 2048/2048'], 'in the order the server sent them')

  const subscription = subscribe()
  const batches: ReturnType<typeof summary>[] = []
  for await (const batch of toLogBatches(subscription as AsyncIterable<SubscriptionItem>, { from: at(0), streamPrefixes: ['card-'], maxBatch: 100, waiting: () => subscription.readableLength })) {
    batches.push(summary(batch))
  }
  t.same(batches.flatMap((batch) => batch.events), [1, 2, 1025], 'as batches: every event once, in order')
  t.equal(batches.at(-1)?.through, '2048/2048', 'ending at the last checkpoint')
})
