import t from 'tap'
import { MAX_PATH_LENGTH, parseJsonPath, readJsonPath } from '../../src/domain/json-path.js'
import { examples } from '../helpers/decider-spec.js'

t.test('parseJsonPath: the forms a flow may write', async (t) => {
  examples(t, parseJsonPath, [
    ['$ alone is the whole document', ['$'], []],
    ['.name members', ['$.order.status'], ['order', 'status']],
    ['a member name holds digits, _ and - after its first letter', ['$._id.a-b.x9'], ['_id', 'a-b', 'x9']],
    ['an item by its index, from 0', ['$.items[0].name'], ['items', 0, 'name']],
    ['an index of nine digits', ['$[123456789]'], [123456789]],
    ["['name'] reaches any name", ["$['content-type']['a b']"], ['content-type', 'a b']],
    ['["name"] too, with an escaped quote', ['$["na\\"me"]'], ['na"me']],
    ["an escaped quote and backslash in ['…']", ["$['it\\'s']['a\\\\b']"], ["it's", 'a\\b']],
    ['an empty quoted name', ["$['']"], ['']],
    ['a quoted name that looks like an index stays a name', ["$['0']"], ['0']],
    ['a quoted member named like an object member', ["$['__proto__']"], ['__proto__']],
    ['forms mixed', ["$.a[1]['b'][\"c\"].d"], ['a', 1, 'b', 'c', 'd']],
  ])
})

t.test('parseJsonPath: refused forms answer why', async (t) => {
  const refused = function refused(path: string) {
    const parsed = parseJsonPath(path)
    return typeof parsed === 'string' ? parsed : `accepted as ${JSON.stringify(parsed)}`
  }
  examples(t, refused, [
    ['a path without $', ['order.status'], 'a path starts with $ (the whole response), as in $.order.status'],
    ['an empty path', [''], 'a path starts with $ (the whole response), as in $.order.status'],
    ['a member without $', ['.order'], 'a path starts with $ (the whole response), as in $.order.status'],
    ['a wildcard member', ['$.*'], '".*" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a wildcard item', ['$.items[*]'], '"[*]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a descent', ['$..name'], '"..name" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a filter', ['$.items[?(@.price > 1)]'], '"[?(@.price > 1)]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a slice', ['$.items[0:2]'], '"[0:2]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a negative index', ['$.items[-1]'], '"[-1]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['an index of ten digits', ['$[1234567890]'], '"[1234567890]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a union of names', ["$['a','b']"], '"[\'a\',\'b\']" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a member starting with a digit', ['$.1a'], '".1a" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a dot with no name', ['$.'], '"." is not a member (.name or [\'name\']) or an item ([0])'],
    ['an unclosed quote', ["$['a]"], '"[\'a]" is not a member (.name or [\'name\']) or an item ([0])'],
    ['text after the last segment', ['$.a b'], '" b" is not a member (.name or [\'name\']) or an item ([0])'],
    ['a name outside ASCII after a dot: the rest after its ASCII start', ['$.ação'], '"ção" is not a member (.name or [\'name\']) or an item ([0])'],
    [`more than ${MAX_PATH_LENGTH} characters`, [`$.${'a'.repeat(MAX_PATH_LENGTH - 1)}`], `a path has at most ${MAX_PATH_LENGTH} characters`],
  ])
  const longest = `$.${'a'.repeat(MAX_PATH_LENGTH - 2)}`
  t.same(parseJsonPath(longest), ['a'.repeat(MAX_PATH_LENGTH - 2)], `exactly ${MAX_PATH_LENGTH} characters is a path`)
})

t.test('readJsonPath: one place or nothing', async (t) => {
  const document = {
    order: { status: 'paid', total: 12.5, express: false, note: null, items: [{ name: 'tea' }, { name: 'cake' }] },
    'content-type': 'json',
    0: 'a member named 0',
  }
  const read = function read(path: string, from: unknown = document) {
    const segments = parseJsonPath(path)
    if (typeof segments === 'string') throw new Error(segments)
    return readJsonPath(from, segments)
  }
  examples(t, read, [
    ['$ is the whole document', ['$'], document],
    ['a string', ['$.order.status'], 'paid'],
    ['a number', ['$.order.total'], 12.5],
    ['false is a value', ['$.order.express'], false],
    ['null is found as null', ['$.order.note'], null],
    ['an object', ['$.order.items[1]'], { name: 'cake' }],
    ['an item and its member', ['$.order.items[0].name'], 'tea'],
    ['a member of any name', ["$['content-type']"], 'json'],
    ['a list', ['$.order.items'], [{ name: 'tea' }, { name: 'cake' }]],
    ['a member that is not there', ['$.order.customer'], undefined],
    ['below a missing member', ['$.order.customer.name'], undefined],
    ['below null', ['$.order.note.text'], undefined],
    ['the item just past the end', ['$.order.items[2]'], undefined],
    ['far past the end', ['$.order.items[999999999]'], undefined],
    ['an index into an object, even one with a member of that name', ['$[0]'], undefined],
    ['a member of an array', ['$.order.items.length'], undefined],
    ['a member of a string', ['$.order.status.length'], undefined],
    ['an index into a string', ['$.order.status[0]'], undefined],
    ['a member of a number', ['$.order.total.toFixed'], undefined],
  ])
})

t.test('readJsonPath: own members only', async (t) => {
  const read = function read(path: string, from: unknown) {
    const segments = parseJsonPath(path)
    if (typeof segments === 'string') throw new Error(segments)
    return readJsonPath(from, segments)
  }
  examples(t, read, [
    ['$.constructor finds nothing', ['$.constructor', {}], undefined],
    ["$['__proto__'] finds nothing", ["$['__proto__']", {}], undefined],
    ['$.toString finds nothing', ['$.toString', { a: 1 }], undefined],
    ['$.hasOwnProperty finds nothing', ['$.hasOwnProperty', {}], undefined],
    ["an array's constructor finds nothing", ["$.list['constructor']", { list: [] }], undefined],
    ['a member a response names __proto__ is its own, and found', ["$['__proto__'].a", JSON.parse('{"__proto__":{"a":1}}')], 1],
    ['a member a response names constructor is found', ['$.constructor', JSON.parse('{"constructor":"mine"}')], 'mine'],
  ])
})
