import t from 'tap'
import type { Step, Wake } from '../../../src/domain/nodes/node-type.js'
import { check, EventName, exits, run, schema, WAIT_SECONDS, wake, writes, type Data } from '../../../src/domain/nodes/wait-for-event.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog, recordingVisit, type Effect } from '../../helpers/visit.js'

const node = (data: Data) => ({ id: 'node', type: 'waitForEvent', position: { x: 0, y: 0 }, data })
const paid: Data = { event: 'payment.confirmed', timeoutSeconds: 3600, saveAs: 'payment' }

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['an event name, a timeout and a variable', [paid], true],
    ['no variable', [{ event: 'paid', timeoutSeconds: 60 }], true],
    [`the shortest wait, ${WAIT_SECONDS.min} s`, [{ event: 'paid', timeoutSeconds: WAIT_SECONDS.min }], true],
    [`the longest wait, ${WAIT_SECONDS.max} s (a week)`, [{ event: 'paid', timeoutSeconds: 604800 }], true],
    ['a wait under 5 s', [{ event: 'paid', timeoutSeconds: 4 }], false],
    ['a wait over a week', [{ event: 'paid', timeoutSeconds: 604801 }], false],
    ['a wait of a fraction of a second', [{ event: 'paid', timeoutSeconds: 5.5 }], false],
    ['no timeout', [{ event: 'paid' }], false],
    ['no event', [{ timeoutSeconds: 60 }], false],
    ['a name that is no variable name', [{ ...paid, saveAs: 'my payment' }], false],
  ])
  examples(t, accepts(EventName), [
    ['dots, colons, dashes and underscores after the first character', ['payment.confirmed:v2_x-y'], true],
    ['a digit first', ['3ds.done'], true],
    ['100 characters', ['a'.repeat(100)], true],
    ['101 characters', ['a'.repeat(101)], false],
    ['empty', [''], false],
    ['a dot first', ['.paid'], false],
    ['a space', ['payment confirmed'], false],
    ['a slash', ['payment/confirmed'], false],
    ['a letter outside ASCII', ['pagamento.concluído'], false],
  ])
})

t.test('exits and writes', async (t) => {
  t.same(exits(), [
    { id: 'received', label: 'received', kind: 'default' },
    { id: 'timeout', label: 'timeout', kind: 'timeout' },
  ])
  examples(t, writes, [
    ['its variable', [{ saveAs: 'payment' }], 'payment'],
    ['none without one', [{ event: 'paid' }], undefined],
    ['none in a draft where it is no string', [{ saveAs: 3 }], undefined],
  ])
})

t.test('check: saveAs is an object variable', async (t) => {
  const catalog = { ...emptyCatalog, variables: new Map<string, VariableType>([['payment', 'object'], ['label', 'string']]) }
  const problems = function problems(saveAs: string | undefined) {
    return checkProblems(check, { event: 'paid', timeoutSeconds: 60, ...(saveAs !== undefined && { saveAs }) }, catalog)
  }
  examples(t, problems, [
    ['an object variable', ['payment'], []],
    ['no variable', [undefined], []],
    ['a string variable', ['label'], ['saveAs: variable "label" holds a string, but an event\'s data is an object']],
    ['a variable the workspace lacks', ['missing'], ['saveAs: no variable "missing" in this workspace']],
    ['a system variable', ['lastMessage'], ['saveAs: "lastMessage" is a system variable; it is read-only']],
  ])
})

t.test('run: takes a kept event, or waits', async (t) => {
  const ran = function ran(data: Data, kept: { name: string; data: Record<string, unknown> }[]) {
    const { visit, effects } = recordingVisit({}, null, [], kept)
    const step = run(node(data), visit)
    return { step, effects, kept }
  }
  const order = { orderId: 'o-1', total: 10 }
  examples(t, ran, [
    [
      'a kept event of its name is taken: it leaves by received, its data saved',
      [paid, [{ name: 'payment.confirmed', data: order }]],
      { step: { exit: 'received' }, effects: [{ assign: 'payment', value: order }], kept: [] },
    ],
    [
      'the oldest of its name, the others kept',
      [paid, [{ name: 'other', data: {} }, { name: 'payment.confirmed', data: { n: 1 } }, { name: 'payment.confirmed', data: { n: 2 } }]],
      { step: { exit: 'received' }, effects: [{ assign: 'payment', value: { n: 1 } }], kept: [{ name: 'other', data: {} }, { name: 'payment.confirmed', data: { n: 2 } }] },
    ],
    ['without saveAs, nothing is saved', [{ event: 'paid', timeoutSeconds: 60 }, [{ name: 'paid', data: order }]], { step: { exit: 'received' }, effects: [], kept: [] }],
    [
      'with none of its name it waits for one',
      [paid, [{ name: 'payment.failed', data: {} }]],
      { step: 'wait', effects: [{ waitForEvent: 'payment.confirmed', timeoutSeconds: 3600 }], kept: [{ name: 'payment.failed', data: {} }] },
    ],
    ['an event name differing only in case is another name', [paid, [{ name: 'Payment.Confirmed', data: {} }]], { step: 'wait', effects: [{ waitForEvent: 'payment.confirmed', timeoutSeconds: 3600 }], kept: [{ name: 'Payment.Confirmed', data: {} }] }],
  ])
})

t.test('wake: an event or the timer ends the wait', async (t) => {
  const woken = function woken(data: Data, how: Wake): { step: Step; effects: Effect[] } {
    const { visit, effects } = recordingVisit()
    const step = wake(node(data), visit, how)
    return { step, effects }
  }
  const data = { orderId: 'o-1' }
  examples(t, woken, [
    ['the event: it stops waiting, saves the data and leaves by received', [paid, { type: 'event', name: 'payment.confirmed', data }], { step: { exit: 'received' }, effects: ['stopWaiting', { assign: 'payment', value: data }] }],
    ['the event without saveAs', [{ event: 'paid', timeoutSeconds: 60 }, { type: 'event', name: 'paid', data }], { step: { exit: 'received' }, effects: ['stopWaiting'] }],
    [
      'the timer: it stops waiting and leaves by timeout, saving nothing (the session finishes for a timeout where no edge leaves there)',
      [paid, { type: 'timer', until: '2026-01-01T01:00:00.000Z', retries: 0, reminded: 0 }],
      { step: { exit: 'timeout', finishReason: 'timeout' }, effects: ['stopWaiting'] },
    ],
  ])
})
