import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { EventSchemaError } from '../../src/commands/handle.js'
import type { Decider } from '../../src/domain/decider.js'
import { ConflictError } from '../../src/errors.js'
import { examples, rejects, spec } from '../helpers/decider-spec.js'

// The Decider contract as the spec kit holds every decider of src/domain to it, shown on a counter.

type Added = { type: 'Added'; data: { amount: number; note: string } }
type Add = { type: 'Add'; data: { amount: number; note: string } }
type Counter = { total: number; notes: string[] }

const counter: Decider<Add, Counter, Added> = {
  initialState: { total: 0, notes: [] },
  eventSchemas: { Added: Type.Object({ amount: Type.Integer({ minimum: 1 }), note: Type.String() }) },
  decide(command, state) {
    if (state.total >= 10) throw new ConflictError('full')
    return command.data.amount === 0 ? [] : [{ type: 'Added', data: command.data }]
  },
  evolve: (state, event) => ({ total: state.total + event.data.amount, notes: [...state.notes, event.data.note] }),
}

const add = (amount: number, note = 'n'): Add => ({ type: 'Add', data: { amount, note } })
const added = (amount: number, note = 'n'): Added => ({ type: 'Added', data: { amount, note } })

/** A tap test that records what the kit asserts instead of reporting it. */
function recorder() {
  const outcomes: { ok: boolean; message: string; extra: Record<string, unknown> }[] = []
  const record = (ok: boolean) => (message: string, extra: Record<string, unknown> = {}) => outcomes.push({ ok, message, extra })
  return { test: { pass: record(true), fail: record(false) } as unknown as Test, outcomes }
}

t.test('a case passes or fails as one assertion named by its situation', async (t) => {
  const { test, outcomes } = recorder()
  const { given } = spec(test, counter)
  t.same(given(added(2)).when(add(3)).then([added(3)], 'adds'), { total: 5, notes: ['n', 'n'] }, 'then gives the state after the decided events')
  given(added(2)).when(add(0)).thenNothing('adds nothing')
  given(added(10)).when(add(1)).thenRejects(ConflictError, 'full')
  given(added(2)).when(add(3)).then([added(4)], 'adds four')
  t.same(outcomes.map(({ ok, message }) => [ok, message.split(':')[0]]), [[true, 'adds'], [true, 'adds nothing'], [true, 'full'], [false, 'adds four']])
  t.match(outcomes[3]!.message, 'given [Added] when Add: expected [Added] but decided [Added], first at [0].data.amount: expected 4, got 3', 'a failure names the history, the command and the first difference')
  t.match(outcomes[3]!.extra, { expected: /amount: 4/, decided: /amount: 3/ }, 'and shows both lists of events')
})

t.test('what the command path would refuse fails the case', async (t) => {
  const { test, outcomes } = recorder()
  const { given } = spec(test, counter)
  given().when(add(-1)).then([added(-1)], 'an event its schema refuses')
  given().when(add(-1)).thenRejects(EventSchemaError, 'is a rejection, as on append')
  given(added(-1)).when(add(1)).then([added(1)], 'a given event its schema refuses')
  given().when(add(1)).thenRejects(ConflictError, 'a rejection expected, events decided')
  given(added(10)).when(add(1)).thenRejects(EventSchemaError, 'another rejection than expected')
  given(added(10)).when(add(1)).thenRejects({ type: ConflictError, message: /empty/ }, 'the right class, another message')
  given(added(-1)).when(add(1)).thenRejects(/amount/, 'a history its schemas refuse is no rejection')
  t.same(outcomes.map(({ ok }) => ok), [false, true, false, false, false, false, false])
  t.match(outcomes[2]!.message, /given event 0 \(Added\) fails: EventSchemaError/)
  t.match(outcomes[4]!.message, /expected a rejection \(EventSchemaError\) but got ConflictError: 'full'/)
})

t.test('a decide or evolve that mutates its input fails the case', async (t) => {
  const { test, outcomes } = recorder()
  const mutatingEvolve: typeof counter = { ...counter, evolve: (state, event) => (state.notes.push(event.data.note), { ...state, total: state.total + event.data.amount }) }
  const mutatingDecide: typeof counter = { ...counter, decide: (command, state) => ((command.data.note = 'changed'), counter.decide(command, state)) }
  spec(test, mutatingEvolve).given(added(1)).when(add(1)).then([added(1)], 'evolve pushes into the state')
  spec(test, mutatingDecide).given().when(add(1)).then([added(1, 'changed')], 'decide writes into the command')
  t.same(outcomes.map(({ ok }) => ok), [false, false])
  t.match(outcomes[0]!.message, /TypeError/, 'the frozen state refused the push')
})

t.test('messages hold generated strings escaped', async (t) => {
  const { test, outcomes } = recorder()
  const generated = 'a\u2028b\u2029c\nd\u0085e\u202ef'
  spec(test, counter).given().when(add(1, generated)).then([added(1, 'other')])
  examples(test, (text: string) => text.length, [['a generated string', [generated], 0]])
  examples(test, (text: string) => text.length, [['a generated string', [generated], rejects(Error)]])
  t.equal(outcomes.length, 3)
  for (const { message, extra } of outcomes) {
    t.notMatch(message, /[\u2028\u2029\u0085\n\u202e]/u, 'no line or paragraph separator, control or bidi character in the message')
    t.notMatch(JSON.stringify(extra), /[\u2028\u2029\u0085\u202e]/u, 'nor in its details')
  }
  t.match(outcomes[0]!.message, String.raw`a\u{2028}b\u{2029}c\nd\x85e\u{202e}f`, 'they are shown as escapes')
})

t.test('examples', async (t) => {
  const { test, outcomes } = recorder()
  const half = function half(n: number) {
    if (n % 2) throw new RangeError('odd')
    return n / 2
  }
  examples(test, half, [
    ['even', [4], 2],
    ['odd', [3], rejects(RangeError)],
    ['wrong', [4], 3],
    ['throws unexpectedly', [3], 1],
    ['should throw', [4], rejects(/odd/)],
  ])
  t.same(outcomes.map(({ ok }) => ok), [true, true, false, false, false])
  t.match(outcomes[2]!.message, 'wrong: half(4) returned 2, first difference at (top): expected 3, got 2; expected 3')
  t.match(outcomes[3]!.message, 'throws unexpectedly: half(3) threw RangeError: \'odd\'')
  t.match(outcomes[4]!.message, 'should throw: half(4) should throw (message /odd/) but returned 2')
})
