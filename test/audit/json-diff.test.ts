import t from 'tap'
import { diffJson, formatDiff } from '../../src/audit/json-diff.js'

t.test('equal documents have no differences, whatever the key order', async (t) => {
  t.same(diffJson({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }), [])
  t.same(diffJson(null, null), [])
  t.same(diffJson({ a: 1, gone: undefined }, { a: 1 }), [], 'a key holding undefined is absent, as in JSON')
})

t.test('each difference is named by its path', async (t) => {
  const recorded = { data: { output: { messages: [{ type: 'text', text: { body: 'Hi Ana!' } }], 'odd key': 1, removed: true } } }
  const replayed = { data: { output: { messages: [{ type: 'text', text: { body: 'Hi Bob!' } }, { type: 'text' }], 'odd key': 2, added: null } } }
  t.same(diffJson(recorded, replayed), [
    { kind: 'changed', path: '$.data.output.messages[0].text.body', left: 'Hi Ana!', right: 'Hi Bob!' },
    { kind: 'added', path: '$.data.output.messages[1]', right: { type: 'text' } },
    { kind: 'changed', path: '$.data.output["odd key"]', left: 1, right: 2 },
    { kind: 'removed', path: '$.data.output.removed', left: true },
    { kind: 'added', path: '$.data.output.added', right: null },
  ])
})

t.test('a value of another JSON type is one change at its path', async (t) => {
  t.same(diffJson({ a: [1] }, { a: { 0: 1 } }), [{ kind: 'changed', path: '$.a', left: [1], right: { 0: 1 } }])
  t.same(diffJson({ a: 1 }, { a: '1' }), [{ kind: 'changed', path: '$.a', left: 1, right: '1' }])
  t.same(diffJson([1, 2, 3], [1]), [
    { kind: 'removed', path: '$[1]', left: 2 },
    { kind: 'removed', path: '$[2]', left: 3 },
  ])
})

t.test('formatDiff prints a line diff under each path', async (t) => {
  const text = formatDiff(diffJson({ a: 'x', b: 1 }, { a: 'y', c: [2] }), { left: 'recorded', right: 'replayed' })
  t.equal(
    text,
    ['--- recorded', '+++ replayed', '@ $.a', '- "x"', '+ "y"', '@ $.b', '- 1', '@ $.c', '+ [2]'].join('\n'),
  )
})
