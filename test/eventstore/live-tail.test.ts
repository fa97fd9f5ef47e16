import t from 'tap'
import { LiveTail, type Page, type PageReader } from '../../src/eventstore/live-tail.js'
import type { Position, RecordedEvent } from '../../src/eventstore/port.js'
import { WakeUp } from '../../src/eventstore/wake-up.js'

// The live tail shares one reader of the log's head among a process's subscribers. A subscriber
// that joins while the tail has no members, behind where a read still in flight starts, must not
// be handed that read's page as if it covered everything after its own position.

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })
const event = (n: number): RecordedEvent =>
  ({ id: `e${n}`, type: 'Ticked', data: {}, metadata: {}, stream: 'tick-1', revision: BigInt(n), position: at(n), createdAt: '2026-11-28T12:00:00.000Z' }) as RecordedEvent

/** A log of `size` events whose reads wait until `release` lets each one answer. */
function heldLog(size: number) {
  const events = Array.from({ length: size }, (_, i) => event(i + 1))
  const pending: (() => void)[] = []
  const reads: Position[] = []
  const read: PageReader = async ({ from, limit }) => {
    reads.push(from)
    await new Promise<void>((resolve) => pending.push(resolve))
    const page = events.filter((e) => e.position.commit > from.commit).slice(0, limit)
    return { events: page, through: page.at(-1)?.position ?? from } satisfies Page
  }
  const release = async () => {
    while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve))
    pending.shift()!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return { read, release, reads }
}

t.test('a member that joins behind a read in flight catches up on its own instead of skipping what lies between', async (t) => {
  const log = heldLog(10)
  const tail = new LiveTail(log.read, new WakeUp('test'), 10_000)
  t.teardown(() => tail.close())
  const first = tail.join({ streamPrefixes: [] }, 100, at(6))!
  // The tail reads from 6; its only member leaves before the page comes back.
  await new Promise((resolve) => setImmediate(resolve))
  tail.leave(first)
  const behind = tail.join({ streamPrefixes: [] }, 100, at(2))!
  await log.release()
  t.same(await behind.take(), [], 'none of the page from 6 on is handed to it')
  t.ok(behind.released, 'let go: the page read from 6 does not cover 3 to 6')
  t.same(behind.position, at(2), 'it goes on from where it was')
})
