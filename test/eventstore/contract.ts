import { randomBytes, randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import {
  START,
  WrongExpectedVersionError,
  comparePositions,
  positionToString,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
} from '../../src/eventstore/port.js'

const newEvent = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { correlationId: randomUUID(), actor: 'contract-test' },
})

/** Collects events from a subscription until `until` holds, then stops it. */
async function collect(
  store: EventStore,
  options: { from: Position; streamPrefixes: string[] },
  until: (seen: RecordedEvent[]) => boolean,
): Promise<RecordedEvent[]> {
  const controller = new AbortController()
  const seen: RecordedEvent[] = []
  let through = options.from
  for await (const batch of store.subscribeAll({ ...options, signal: controller.signal, maxBatch: 200 })) {
    const last = batch.events.at(-1)
    // A batch covers the log up to its `through`: never behind its last event, never going back.
    if ((last && comparePositions(batch.through, last.position) < 0) || comparePositions(batch.through, through) <= 0) throw new Error('a batch reaches back behind its events or an earlier batch')
    through = batch.through
    seen.push(...batch.events)
    if (until(seen)) controller.abort()
  }
  return seen
}

/**
 * The behaviour every event-store adapter must have. `open` gives a store to test; stream names
 * carry a per-run prefix and each test's streams are its own, so the tests can share one database,
 * and the suite a long-lived server with other runs.
 */
export function eventStoreContract(t: Test, open: (t: Test) => Promise<EventStore>): void {
  const run = `c${randomBytes(4).toString('hex')}`
  const stream = (name: string) => `${run}${name}-${randomUUID()}`

  t.test('appends and reads a stream back in revision order with data and metadata', async (t) => {
    const store = await open(t)
    const s = stream('order')
    const first = await store.append(s, [newEvent('Opened', { n: 1 }), newEvent('Noted', { n: 2 })], { expectedRevision: 'no_stream' })
    t.equal(first.nextRevision, 1n)
    const second = await store.append(s, [newEvent('Closed', { n: 3, nested: { ok: true } })], { expectedRevision: 1n })
    t.equal(second.nextRevision, 2n)
    t.ok(comparePositions(second.position, first.position) > 0, 'positions grow')

    const events = await store.readStream(s)
    t.same(events.map((e) => [e.type, e.revision, e.data]), [
      ['Opened', 0n, { n: 1 }],
      ['Noted', 1n, { n: 2 }],
      ['Closed', 2n, { n: 3, nested: { ok: true } }],
    ])
    t.equal(events[0]!.metadata.actor, 'contract-test')
    t.equal(events[0]!.stream, s)
    t.match(events[0]!.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    // In UTC whatever the server's time zone: a minute covers the test's run and clocks apart.
    t.ok(Math.abs(Date.parse(events[0]!.createdAt) - Date.now()) < 60_000, `${events[0]!.createdAt} is the time of the append`)
    t.same(await store.readStream(s, { from: 2n }).then((e) => e.map((x) => x.type)), ['Closed'])
    t.same(await store.readStream(stream('missing')), [])
  })

  t.test('expected revision: no_stream, exact and any', async (t) => {
    const store = await open(t)
    const s = stream('expect')
    await store.append(s, [newEvent('A')], { expectedRevision: 'no_stream' })
    await t.rejects(store.append(s, [newEvent('B')], { expectedRevision: 'no_stream' }), WrongExpectedVersionError)
    await t.rejects(store.append(s, [newEvent('B')], { expectedRevision: 5n }), WrongExpectedVersionError)
    await t.rejects(store.append(stream('none'), [newEvent('B')], { expectedRevision: 0n }), WrongExpectedVersionError)
    const conflict = await store.append(s, [newEvent('B')], { expectedRevision: 3n }).catch((e: unknown) => e)
    t.ok(conflict instanceof WrongExpectedVersionError)
    t.equal((conflict as WrongExpectedVersionError).stream, s)
    t.equal((await store.append(s, [newEvent('B')], { expectedRevision: 0n })).nextRevision, 1n)
    t.equal((await store.append(s, [newEvent('C')], { expectedRevision: 'any' })).nextRevision, 2n)
    t.equal((await store.append(stream('fresh'), [newEvent('C')], { expectedRevision: 'any' })).nextRevision, 0n)
    t.same((await store.readStream(s)).map((e) => e.type), ['A', 'B', 'C'])
  })

  t.test('a retried append with the same event ids writes nothing twice', async (t) => {
    const store = await open(t)
    const s = stream('idem')
    const events = [newEvent('A'), newEvent('B')]
    const first = await store.append(s, events, { expectedRevision: 'no_stream' })
    const again = await store.append(s, events, { expectedRevision: 'no_stream' })
    t.equal(again.nextRevision, first.nextRevision)
    t.same(again.position, first.position)
    const anyAgain = await store.append(s, events, { expectedRevision: 'any' })
    t.equal(anyAgain.nextRevision, 1n)
    t.equal((await store.readStream(s)).length, 2)
  })

  t.test('a retried append answers with its original result after later appends to its stream', async (t) => {
    const store = await open(t)
    const s = stream('idem-later')
    await store.append(s, [newEvent('A')], { expectedRevision: 'no_stream' })
    const batch = [newEvent('B'), newEvent('C')]
    const original = await store.append(s, batch, { expectedRevision: 0n })
    await store.append(s, [newEvent('D')], { expectedRevision: 2n })
    const retried = await store.append(s, batch, { expectedRevision: 0n })
    t.equal(retried.nextRevision, original.nextRevision, 'the revision it was given')
    t.same(retried.position, original.position, 'and the position')
    await t.rejects(store.append(s, [batch[0]!, newEvent('E')], { expectedRevision: 0n }), WrongExpectedVersionError, 'a partial overlap is a conflict')
    t.equal((await store.readStream(s)).length, 4, 'nothing written twice')
  })

  t.test('concurrent appends to many streams, each on its own expected revision: those that hold go in, each answered alone', async (t) => {
    const store = await open(t)
    const existing = Array.from({ length: 30 }, (_, i) => stream(`many-${i}`))
    await Promise.all(existing.map((s) => store.append(s, [newEvent('Opened')], { expectedRevision: 'no_stream' })))
    const fresh = Array.from({ length: 10 }, (_, i) => stream(`many-new-${i}`))
    // Every third existing stream is appended at a revision it is not at, as is one that exists already as `no_stream`.
    const plans = [
      ...existing.map((s, i) => ({ s, expected: i % 3 === 0 ? 7n : 0n, events: i % 2 === 0 ? [newEvent('A', { i }), newEvent('B', { i })] : [newEvent('A', { i })] })),
      ...fresh.map((s, i) => ({ s, expected: 'no_stream' as const, events: [newEvent('Started', { i })] })),
      { s: existing[1]!, expected: 'no_stream' as const, events: [newEvent('Again')] },
    ]
    const outcomes = await Promise.allSettled(plans.map(({ s, expected, events }) => store.append(s, events, { expectedRevision: expected })))
    const wrongRevision = (plan: (typeof plans)[number], index: number) => plan.expected === 7n || index === plans.length - 1
    plans.forEach((plan, index) => {
      const outcome = outcomes[index]!
      if (wrongRevision(plan, index)) {
        t.ok(outcome.status === 'rejected' && outcome.reason instanceof WrongExpectedVersionError, `append ${index}, at a revision its stream is not at, is refused`)
      } else {
        const last = (plan.expected === 'no_stream' ? -1n : plan.expected) + BigInt(plan.events.length)
        t.ok(outcome.status === 'fulfilled' && outcome.value.nextRevision === last, `append ${index} goes in and is answered its own revision`)
      }
    })
    for (const [index, plan] of plans.entries()) {
      if (index === plans.length - 1) continue
      const types = (await store.readStream(plan.s)).map((e) => e.type)
      const before = plan.expected === 'no_stream' ? [] : ['Opened']
      t.same(types, wrongRevision(plan, index) ? before : [...before, ...plan.events.map((e) => e.type)], `stream of append ${index} holds what was accepted, in order`)
    }
  })

  t.test('50 concurrent appends with one expected revision: exactly one wins', async (t) => {
    const store = await open(t)
    const s = stream('race')
    await store.append(s, [newEvent('Opened')], { expectedRevision: 'no_stream' })
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => store.append(s, [newEvent('Raced', { i })], { expectedRevision: 0n })),
    )
    const won = outcomes.filter((o) => o.status === 'fulfilled')
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')
    t.equal(won.length, 1, 'one append succeeds')
    t.equal(lost.length, 49)
    t.ok(lost.every((o) => o.reason instanceof WrongExpectedVersionError), 'the others get the typed conflict error')
    t.equal((await store.readStream(s)).length, 2)
  })

  t.test("concurrent appends at any revision, to new streams and then to the same streams: the global log has each stream in revision order", async (t) => {
    const store = await open(t)
    const prefix = `${run}anyrace${randomBytes(3).toString('hex')}-`
    // A hundred appends at once a round; each stream's ten, started one after another, meet at its
    // row and retry (quadratic on the embedded database's one connection, hence not more streams).
    const streams = 10
    const perRound = 10
    for (const round of ['new', 'existing']) {
      await Promise.all(
        Array.from({ length: streams * perRound }, (_, i) => store.append(`${prefix}${Math.floor(i / perRound)}`, [newEvent('Raced', { round })], { expectedRevision: 'any' })),
      )
    }
    const log: RecordedEvent[] = []
    for (let page = await store.readAll({ from: START, limit: 500, streamPrefixes: [prefix] }); page.length > 0; page = await store.readAll({ from: page.at(-1)!.position, limit: 500, streamPrefixes: [prefix] })) {
      log.push(...page)
    }
    t.equal(log.length, streams * perRound * 2, 'every event read')
    const nextRevision = new Map<string, bigint>()
    const outOfOrder = log.filter((event) => {
      const expected = nextRevision.get(event.stream) ?? 0n
      nextRevision.set(event.stream, event.revision + 1n)
      return event.revision !== expected
    })
    t.equal(outOfOrder.length, 0, 'each stream read in revision order, without a gap')
  })

  t.test('20 concurrent appenders x 150 events while a subscriber runs: each event seen once, streams in order', async (t) => {
    const store = await open(t)
    const prefix = `${run}load${randomBytes(3).toString('hex')}-`
    const appenders = 20
    const perAppender = 150
    const total = appenders * perAppender
    const subscriber = collect(store, { from: START, streamPrefixes: [prefix] }, (seen) => seen.length >= total)
    await Promise.all(
      Array.from({ length: appenders }, async (_, a) => {
        const s = `${prefix}${a}`
        for (let i = 0; i < perAppender; i++) {
          await store.append(s, [newEvent('Counted', { a, i })], { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) })
        }
      }),
    )
    const seen = await subscriber
    t.equal(seen.length, total, 'every event delivered')
    t.equal(new Set(seen.map((e) => e.id)).size, seen.length, 'no event delivered twice')
    const nextRevision = new Map<string, bigint>()
    let ordered = true
    for (const event of seen) {
      const expected = nextRevision.get(event.stream) ?? 0n
      if (event.revision !== expected) ordered = false
      nextRevision.set(event.stream, event.revision + 1n)
    }
    t.ok(ordered, 'each stream arrives in revision order')
    let globallyOrdered = true
    for (let i = 1; i < seen.length; i++) if (comparePositions(seen[i - 1]!.position, seen[i]!.position) >= 0) globallyOrdered = false
    t.ok(globallyOrdered, 'positions strictly increase along the subscription')
  })

  t.test('live subscribers of one store, one slow and far behind, one fast: each gets every event once', async (t) => {
    const store = await open(t)
    const prefix = `${run}pace${randomBytes(3).toString('hex')}-`
    const total = 300
    const subscribe = async (maxBatch: number, pauseMs: number) => {
      const controller = new AbortController()
      const seen: number[] = []
      for await (const batch of store.subscribeAll({ from: START, streamPrefixes: [prefix], signal: controller.signal, maxBatch })) {
        seen.push(...batch.events.map((e) => (e.data as { i: number }).i))
        if (seen.length >= total) controller.abort()
        // A slow consumer: the events appended meanwhile pile up for it.
        else if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs))
      }
      return seen
    }
    // Both are live (caught up on an empty prefix) before the first append.
    const slow = subscribe(5, 20)
    const fast = subscribe(200, 0)
    await new Promise((resolve) => setTimeout(resolve, 100))
    for (let i = 0; i < total; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => store.append(`${prefix}${i + k}`, [newEvent('Paced', { i: i + k })], { expectedRevision: 'no_stream' })))
    }
    const everything = Array.from({ length: total }, (_, i) => i)
    t.same([...(await fast)].sort((a, b) => a - b), everything, 'the fast one: every event once')
    t.same([...(await slow)].sort((a, b) => a - b), everything, 'the slow one: every event once, after falling behind')
  })

  t.test('a subscriber restarted from its checkpoint neither loses nor repeats events', async (t) => {
    const store = await open(t)
    const prefix = `${run}resume${randomBytes(3).toString('hex')}-`
    const appendSome = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) await store.append(`${prefix}${i % 3}`, [newEvent('Tick', { i })], { expectedRevision: 'any' })
    }
    await appendSome(0, 30)
    const firstRun = await collect(store, { from: START, streamPrefixes: [prefix] }, (seen) => seen.length >= 12)
    const checkpoint = firstRun[11]!.position
    const delivered = firstRun.slice(0, 12)
    await appendSome(30, 20)
    const secondRun = await collect(store, { from: checkpoint, streamPrefixes: [prefix] }, (seen) => seen.length >= 38)
    const all = [...delivered, ...secondRun]
    t.equal(secondRun.length, 38)
    t.same(
      all.map((e) => (e.data as { i: number }).i).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
      'every event exactly once across the restart',
    )
  })

  t.test('subscriptions and reads of the global log honour the stream prefix filter', async (t) => {
    const store = await open(t)
    const wanted = `${run}want${randomBytes(3).toString('hex')}-`
    const other = `${run}other${randomBytes(3).toString('hex')}-`
    for (let i = 0; i < 5; i++) {
      await store.append(`${wanted}${i}`, [newEvent('Wanted')], { expectedRevision: 'no_stream' })
      await store.append(`${other}${i}`, [newEvent('Other')], { expectedRevision: 'no_stream' })
    }
    const seen = await collect(store, { from: START, streamPrefixes: [wanted] }, (s) => s.length >= 5)
    t.same(seen.map((e) => e.type), Array(5).fill('Wanted'))
    const page = await store.readAll({ from: START, limit: 3, streamPrefixes: [wanted, other] })
    t.equal(page.length, 3)
    const rest = await store.readAll({ from: page[2]!.position, limit: 100, streamPrefixes: [wanted, other] })
    t.equal(rest.length, 7, 'paging by position continues after the last event read')
    const head = await store.headPosition()
    t.ok(comparePositions(head, rest[rest.length - 1]!.position) >= 0, 'the head is at or past the last event')
    await store.append(`${wanted}0`, [newEvent('Wanted'), newEvent('Wanted')], { expectedRevision: 'any' })
    const counted = await store.count({ streamPrefixes: [wanted] })
    // An adapter may not count (undefined); one that does counts every event of the matching streams.
    if (counted !== undefined) t.equal(counted, 7, 'the events of the matching streams, counted')
  })

  t.test('the heads of several filters in one call: each the newest event of its streams, as headPosition has it', async (t) => {
    const store = await open(t)
    const tag = randomBytes(3).toString('hex')
    const [a, b, none] = [`${run}heada${tag}-`, `${run}headb${tag}-`, `${run}headnone${tag}-`]
    await store.append(`${a}1`, [newEvent('A')], { expectedRevision: 'no_stream' })
    await store.append(`${b}1`, [newEvent('B'), newEvent('B')], { expectedRevision: 'no_stream' })
    await store.append(`${a}2`, [newEvent('A')], { expectedRevision: 'no_stream' })
    const last = async (prefixes: string[]) => (await store.readAll({ from: START, limit: 100, streamPrefixes: prefixes })).at(-1)!.position
    const filters = [{ streamPrefixes: [a] }, { streamPrefixes: [b] }, { streamPrefixes: [b, a] }, { streamPrefixes: [none] }, { streamPrefixes: [none, b] }, { streamPrefixes: [a] }]
    const heads = await store.headPositions(filters)
    const expected = [await last([a]), await last([b]), await last([a, b]), START, await last([b]), await last([a])]
    t.same(heads.map(positionToString), expected.map(positionToString), 'each filter its newest event, in the order asked; START for a filter matching nothing')
    t.same(heads.map(positionToString), (await Promise.all(filters.map((filter) => store.headPosition(filter)))).map(positionToString), 'as headPosition answers each filter alone')
    const [everything] = await store.headPositions([{}])
    t.ok(comparePositions(everything!, heads[2]!) >= 0, 'a filter without prefixes: the newest event of every stream')
    t.same(await store.headPositions([]), [], 'no filters, no heads')
  })

  t.test('a subscription ends when its signal aborts', async (t) => {
    const store = await open(t)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    let events = 0
    for await (const batch of store.subscribeAll({ from: START, streamPrefixes: [`${run}nothing-`], signal: controller.signal })) events += batch.events.length
    t.equal(events, 0)
  })
}

/**
 * Group commit on the Postgres-table store, two groups in flight: the first two appends are written
 * at once, each alone; nineteen more sent while they run share the next transaction (one commit
 * position), each with its own revision.
 */
export async function assertGroupCommit(t: Test, store: EventStore): Promise<void> {
  const run = `g${randomBytes(4).toString('hex')}`
  const first = store.append(`${run}-first`, [newEvent('First')], { expectedRevision: 'no_stream' })
  const rest = Array.from({ length: 20 }, (_, i) => store.append(`${run}-${i}`, [newEvent('Next', { i }), newEvent('Then', { i })], { expectedRevision: 'no_stream' }))
  const firstResult = await first
  const results = await Promise.all(rest)
  t.ok(results.every((r) => r.nextRevision === 1n), 'each answered its own stream\'s revision')
  const [second, ...grouped] = results
  t.same(new Set(grouped.map((r) => r.position.commit)).size, 1, 'the nineteen went in one transaction')
  t.not(second!.position.commit, firstResult.position.commit, 'the second went beside the first, in a transaction of its own')
  t.not(grouped[0]!.position.commit, firstResult.position.commit, 'the first did not wait for them')
  t.not(grouped[0]!.position.commit, second!.position.commit, 'nor did the second')
  const positions = results.map((r) => r.position.prepare)
  t.equal(new Set(positions).size, 20, 'each answered the position of its own last event')
  for (const [i, result] of results.entries()) {
    const events = await store.readStream(`${run}-${i}`)
    t.same(events.map((e) => e.type), ['Next', 'Then'])
    t.same(events[1]!.position, result.position, 'the answer is where its last event is')
  }
}
