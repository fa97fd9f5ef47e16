import t from 'tap'
import { sameJson } from '../../src/domain/json.js'
import { examples } from '../helpers/decider-spec.js'

t.test('sameJson', async (t) => {
  examples(t, sameJson, [
    ['key order does not count, as jsonb reorders keys', [{ a: 1, b: { c: [1, 2], d: null } }, { b: { d: null, c: [1, 2] }, a: 1 }], true],
    ['array order counts', [[1, 2], [2, 1]], false],
    ['a missing key', [{ a: 1 }, { a: 1, b: 2 }], false],
    ['the same count of keys, other names', [{ a: 1, b: undefined }, { a: 1, c: undefined }], false],
    ['an array is not an object with index keys', [['x'], { 0: 'x' }], false],
    ['null is not an empty object', [null, {}], false],
    ['a number is not its string', [1, '1'], false],
    ['equal scalars', ['x', 'x'], true],
    ['nested difference', [{ a: [{ b: 1 }] }, { a: [{ b: 2 }] }], false],
  ])
})
