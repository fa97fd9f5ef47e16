import t from 'tap'
import { PrefixHeads, type LoggedEvent } from '../../src/eventstore/prefix-heads.js'
import { positionToString, type Position } from '../../src/eventstore/port.js'

// The heads of stream prefixes read from a log newest first, as the EventStoreDB adapter reads
// `$all` backwards. The log here is an array read from its end, counting the events read; the
// contract suite (test/eventstore/esdb.test.ts, with EVENTSTORE_CONNECTION_STRING set) runs the
// same reads against a real server.

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

class FakeLog {
  readonly events: LoggedEvent[] = []
  reads = 0
  probes = 0

  append(...streams: string[]): void {
    for (const stream of streams) this.events.push({ stream, position: at(this.events.length + 1) })
  }

  newestFirst = (): AsyncIterable<LoggedEvent> => {
    this.probes++
    const events = [...this.events]
    const log = this
    return (async function* () {
      for (let i = events.length - 1; i >= 0; i--) {
        log.reads++
        yield events[i]!
      }
    })()
  }
}

const shown = (positions: Position[]) => positions.map(positionToString)

/** A clock that moves only when told to. */
const clock = () => {
  let now = 0
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

t.test('a first probe reads back only until every prefix asked for has met its newest event', async (t) => {
  const log = new FakeLog()
  log.append('card-1', 'session-1', 'card-2', 'session-2', 'flow-1')
  const heads = new PrefixHeads(log.newestFirst)
  t.same(shown(await heads.of([{ streamPrefixes: ['card-'] }, { streamPrefixes: ['session-'] }], 0)), ['3/3', '4/4'])
  t.equal(log.reads, 3, 'flow-1, session-2, card-2: then both are found')
})

t.test('later probes read only the events appended since the one before', async (t) => {
  const log = new FakeLog()
  log.append('card-1', 'session-1', 'card-2')
  const time = clock()
  const heads = new PrefixHeads(log.newestFirst, time.now)
  const filters = [{ streamPrefixes: ['card-'] }, { streamPrefixes: ['session-'] }]
  await heads.of(filters, 0)
  const before = log.reads
  time.advance(1)
  t.same(shown(await heads.of(filters, 0)), ['3/3', '2/2'], 'nothing new: the same heads')
  t.equal(log.reads - before, 1, 'one event read: the newest, already counted')
  log.append('flow-1', 'flow-2', 'session-3', 'flow-3')
  const beforeNew = log.reads
  time.advance(1)
  t.same(shown(await heads.of(filters, 0)), ['3/3', '6/6'], 'the new session event is the head of its prefix')
  t.equal(log.reads - beforeNew, 5, 'the four new events, and one already counted')
})

t.test('a prefix without events reads the log once, and is known to have none after that', async (t) => {
  const log = new FakeLog()
  log.append('card-1', 'card-2', 'card-3')
  const time = clock()
  const heads = new PrefixHeads(log.newestFirst, time.now)
  t.same(shown(await heads.of([{ streamPrefixes: ['oauthclient-'] }], 0)), ['-1/-1'], 'START: nothing of that prefix')
  t.equal(log.reads, 3, 'the whole log, once')
  time.advance(1)
  await heads.of([{ streamPrefixes: ['oauthclient-'] }], 0)
  t.equal(log.reads, 4, 'asked again: the newest event only')
})

t.test('a filter is as new as the newest of its prefixes; no prefixes means every stream', async (t) => {
  const log = new FakeLog()
  log.append('card-1', 'session-1', 'flow-1')
  const heads = new PrefixHeads(log.newestFirst)
  t.same(shown(await heads.of([{ streamPrefixes: ['card-', 'session-'] }, {}, { streamPrefixes: [] }], 0)), ['2/2', '3/3', '3/3'])
  t.same(await heads.of([], 0), [], 'no filters, no heads')
})

t.test('callers within the age they accept share one probe; a caller that needs a fresh one gets one', async (t) => {
  const log = new FakeLog()
  log.append('card-1')
  const time = clock()
  const heads = new PrefixHeads(log.newestFirst, time.now)
  const filters = [{ streamPrefixes: ['card-'] }]
  await Promise.all([heads.of(filters, 1000), heads.of(filters, 1000), heads.of(filters, 1000)])
  t.equal(log.probes, 1, 'concurrent callers: one probe')
  time.advance(999)
  await heads.of(filters, 1000)
  t.equal(log.probes, 1, 'within the age: no probe')
  time.advance(2)
  await heads.of(filters, 1000)
  t.equal(log.probes, 2, 'older than that: a probe')
  await heads.of(filters, 0)
  t.equal(log.probes, 3, 'a caller that needs every event appended before its call: a probe of its own')
})

t.test('events the process appends or is handed move the heads in between probes', async (t) => {
  const log = new FakeLog()
  log.append('card-1', 'session-1')
  const heads = new PrefixHeads(log.newestFirst, () => 0)
  await heads.of([{ streamPrefixes: ['card-'] }], 1000)
  log.append('card-2')
  heads.saw('card-2', at(3))
  heads.saw('card-0', at(1))
  t.same(shown(await heads.of([{ streamPrefixes: ['card-'] }], 1000)), ['3/3'], 'the newer event counts, an older one does not move it back')
  t.equal(log.probes, 1, 'without reading the log')
})
