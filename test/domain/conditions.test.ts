import t from 'tap'
import { judge, type Rule, type Verdict } from '../../src/domain/conditions.js'
import { examples } from '../helpers/decider-spec.js'

const rule = (operator: Rule['operator'], value?: Rule['value']): Rule => ({ id: 'r', variable: 'v', operator, ...(value !== undefined && { value }) })

/** Each case: the operator and rule value, then the variable values it matches and those it does not (undefined = unset). */
const table: [Rule['operator'], Rule['value'], unknown[], unknown[]][] = [
  ['equals', 'pro', ['pro'], ['Pro', 'pro ', 'basic', undefined]],
  ['equals', 42, [42, '42'], [42.5, '42.0', undefined]],
  ['equals', 'true', [true, 'true'], [false]],
  ['equals', '', ['', undefined], ['x']],
  ['not_equals', 'pro', ['Pro', 'basic', undefined], ['pro']],
  ['not_equals', 1, [2, '1.0'], [1, '1']],
  ['contains', 'GOLD', ['my gold plan', 'Gold'], ['silver', undefined]],
  ['contains', 5, [1500, '150'], [40]],
  ['starts_with', 'hel', ['Hello', 'HELP'], ['shell', undefined]],
  ['gt', 18, [19, '18.5', '19,5'], [18, 17, '18', 'abc', true, undefined, '']],
  ['gte', 18, [18, '18'], [17.99, 'eighteen', undefined]],
  ['lt', '10', [9, '-1', '9,99'], [10, 11, 'x', undefined]],
  ['lte', 10, [10, 0], [10.01, undefined]],
  ['gt', 'abc', [], [1, 100, 'zzz']],
  ['exists', undefined, ['x', 0, false, { a: 1 }], [undefined, '']],
  ['regex', '^\\d{5}-?\\d{3}$', ['01310-100', '01310100'], ['0131-100', 'x01310100', undefined]],
  ['regex', '(?i)^yes|^sim', ['YES please', 'sim'], ['no', '']],
  ['regex', 'ana', ['Mariana'], ['ANA']],
]

const row = (situation: string, rule: Rule, actual: unknown, matched: boolean): [string, [Rule, unknown], Verdict] => [situation, [rule, actual], { matched }]
const shown = (value: unknown) => (value === undefined ? 'unset' : JSON.stringify(value))

/** The verdict with its problem cut to its kind (`invalid regex`): the engine's own wording follows it. */
function verdictKind(rule: Rule, actual: unknown): Verdict {
  const verdict = judge(rule, actual)
  return verdict.problem === undefined ? verdict : { ...verdict, problem: verdict.problem.split(':')[0] }
}

t.test('judge', async (t) => {
  examples(
    t,
    judge,
    table.flatMap(([operator, value, matching, failing]) => [
      ...matching.map((actual) => row(`${operator} ${shown(value)} matches ${shown(actual)}`, rule(operator, value), actual, true)),
      ...failing.map((actual) => row(`${operator} ${shown(value)} does not match ${shown(actual)}`, rule(operator, value), actual, false)),
    ]),
  )
  examples(t, judge, [['an object variable compares as its JSON', [rule('contains', '"tier":"gold"'), { tier: 'gold' }], { matched: true }]])
})

t.test('patterns judge never runs', async (t) => {
  const invalid = { matched: false, problem: 'invalid regex' }
  examples(t, verdictKind, [
    ['an invalid pattern never matches and says why', [rule('regex', '(unclosed'), 'unclosed'], invalid],
    ['a backreference needs backtracking, and is refused', [rule('regex', '(a)\\1'), 'aa1y'], invalid],
    ['a lookahead is refused', [rule('regex', '^(?=.*\\d)'), 'aa1y'], invalid],
    ['a lookbehind is refused', [rule('regex', '(?<!x)y'), 'aa1y'], invalid],
  ])
})

t.test('a catastrophic-backtracking pattern runs in linear time', async (t) => {
  const started = performance.now()
  for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(.*a){20}$']) t.same(judge(rule('regex', pattern), `${'a'.repeat(5_000)}!`), { matched: false })
  t.ok(performance.now() - started < 2_000, 'a backtracking engine would take hours here')
})
