import t from 'tap'
import { WriteBatches } from '../../src/store/write-batches.js'

/** A write that stays open until the test lets it finish. */
function heldWrites() {
  const batches: number[][] = []
  const finishers: ((error?: Error) => void)[] = []
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items)
      finishers.push((error) => (error ? reject(error) : resolve()))
    })
  return { batches, finish: (index: number, error?: Error) => finishers[index]!(error), write }
}

const settled = (promise: Promise<void>) => promise.then(() => 'written', (error: Error) => `failed: ${error.message}`)
const turn = () => new Promise((resolve) => setImmediate(resolve))

t.test('items added while a batch is written make the next batch', async (t) => {
  const held = heldWrites()
  const batches = new WriteBatches(held.write)
  const first = settled(batches.add(1))
  const second = settled(batches.add(2))
  const third = settled(batches.add(3))
  t.same(held.batches, [[1]], 'the first item is written at once, alone')
  held.finish(0)
  t.equal(await first, 'written')
  await turn()
  t.same(held.batches, [[1], [2, 3]], 'the two added meanwhile are written together')
  held.finish(1)
  t.same([await second, await third], ['written', 'written'])
  await turn()
  const fourth = settled(batches.add(4))
  t.same(held.batches.at(-1), [4], 'an idle writer writes at once again')
  held.finish(2)
  t.equal(await fourth, 'written')
})

t.test('a failed batch fails its own items only', async (t) => {
  const held = heldWrites()
  const batches = new WriteBatches(held.write)
  const first = settled(batches.add(1))
  const second = settled(batches.add(2))
  held.finish(0, new Error('connection lost'))
  t.equal(await first, 'failed: connection lost')
  await turn()
  held.finish(1)
  t.equal(await second, 'written')
})

t.test('a batch holds at most maxBatch items', async (t) => {
  const held = heldWrites()
  const batches = new WriteBatches(held.write, { maxBatch: 2 })
  const all = [1, 2, 3, 4, 5, 6].map((item) => settled(batches.add(item)))
  for (let index = 0; index < 4; index++) {
    held.finish(index)
    await turn()
  }
  t.same(held.batches, [[1], [2, 3], [4, 5], [6]])
  t.same(await Promise.all(all), Array(6).fill('written'))
})

t.test('items of one key never share a batch, and keep their order', async (t) => {
  const held = heldWrites()
  const batches = new WriteBatches(held.write, { keyOf: (item) => String(item % 10) })
  const all = [1, 11, 2, 21, 12, 3].map((item) => settled(batches.add(item)))
  for (let index = 0; index < 3; index++) {
    held.finish(index)
    await turn()
  }
  t.same(held.batches, [[1], [11, 2, 3], [21, 12]], 'a second item of a key in the batch waits for the next; items of other keys go on')
  t.same(await Promise.all(all), Array(6).fill('written'))
})

t.test('a writer may answer each item on its own: a result, or an error of its alone', async (t) => {
  const batches = new WriteBatches<number, string>(async (items) => items.map((item) => (item % 2 === 0 ? `even ${item}` : new Error(`odd ${item}`))))
  const answers = await Promise.allSettled([1, 2, 3, 4].map((item) => batches.add(item)))
  t.same(
    answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message)),
    ['odd 1', 'even 2', 'odd 3', 'even 4'],
  )
})

t.test('with two in flight, a second batch starts while the first is written, never with a key of the first', async (t) => {
  const held = heldWrites()
  const batches = new WriteBatches<number>(held.write, { maxInFlight: 2, keyOf: (item) => String(item % 10) })
  const first = settled(batches.add(1))
  const second = settled(batches.add(2))
  t.same(held.batches, [[1], [2]], 'the second item does not wait for the first batch')
  const sameKey = settled(batches.add(11))
  const third = settled(batches.add(3))
  await turn()
  t.same(held.batches, [[1], [2]], 'a third batch waits while two are written')
  held.finish(1)
  t.equal(await second, 'written')
  await turn()
  t.same(held.batches.at(-1), [3], 'the next batch leaves out the key still being written')
  held.finish(0)
  t.equal(await first, 'written')
  await turn()
  t.same(held.batches.at(-1), [11], 'the key goes once its batch is written')
  held.finish(2)
  held.finish(3)
  t.same([await third, await sameKey], ['written', 'written'])
})
