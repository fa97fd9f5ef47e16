import t from 'tap'
import { judge, type Rule } from '../../src/domain/conditions.js'
import { initialConversation } from '../../src/engine/interpreter.js'
import type { VariableValue } from '../../src/domain/turn.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { condition, context, edge, end, flow, message, NOW, start, START, text, turn } from '../helpers/engine.js'

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

t.test('judge', async (t) => {
  for (const [operator, value, matching, failing] of table) {
    t.test(`${operator} ${JSON.stringify(value)}`, async (t) => {
      for (const actual of matching) t.same(judge(rule(operator, value), actual), { matched: true }, `matches ${assertionMessage(actual)}`)
      for (const actual of failing) t.same(judge(rule(operator, value), actual), { matched: false }, `does not match ${assertionMessage(actual)}`)
    })
  }

  t.test('an object variable compares as its JSON', async (t) => {
    t.same(judge(rule('contains', '"tier":"gold"'), { tier: 'gold' }), { matched: true })
  })

  t.test('an invalid pattern never matches and says why', async (t) => {
    const verdict = judge(rule('regex', '(unclosed'), 'unclosed')
    t.equal(verdict.matched, false)
    t.match(verdict.problem, /^invalid regex: /)
  })

  t.test('patterns that need backtracking are refused: backreferences and lookarounds', async (t) => {
    for (const pattern of ['(a)\\1', '^(?=.*\\d)', '(?<!x)y']) {
      const verdict = judge(rule('regex', pattern), 'aa1y')
      t.equal(verdict.matched, false, pattern)
      t.match(verdict.problem, /^invalid regex: /, pattern)
    }
  })

  t.test('a catastrophic-backtracking pattern runs in linear time', async (t) => {
    const started = performance.now()
    for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(.*a){20}$']) t.same(judge(rule('regex', pattern), `${'a'.repeat(5_000)}!`), { matched: false })
    t.ok(performance.now() - started < 2_000, 'a backtracking engine would take hours here')
  })
})

t.test('a condition node', async (t) => {
  const route = (variables: Record<string, VariableValue>, ...rules: Rule[]) =>
    turn(
      flow(
        [start(), condition('check', ...rules), message('a', text('a')), message('b', text('b')), message('other', text('other'))],
        [edge('start', 'check'), edge('check', 'a', 'a'), edge('check', 'b', 'b'), edge('check', 'other', 'default')],
      ),
      initialConversation(variables),
      START,
    )
  const plan = (id: string, operator: Rule['operator'], value?: Rule['value']): Rule => ({ ...rule(operator, value), id, variable: 'plan' })

  t.test('follows the first matching rule, in order', async (t) => {
    const out = route({ plan: 'pro' }, plan('a', 'starts_with', 'p'), plan('b', 'equals', 'pro'))
    t.same(out.visited, ['start', 'check', 'a'])
  })

  t.test('skips rules that do not match', async (t) => {
    t.same(route({ plan: 'pro' }, plan('a', 'equals', 'basic'), plan('b', 'equals', 'pro')).visited, ['start', 'check', 'b'])
  })

  t.test('follows default when no rule matches', async (t) => {
    t.same(route({ plan: 'free' }, plan('a', 'equals', 'basic'), plan('b', 'exists')).visited, ['start', 'check', 'b'])
    t.same(route({}, plan('a', 'equals', 'basic'), plan('b', 'exists')).visited, ['start', 'check', 'other'])
  })

  t.test('an invalid regex warns, does not match, and the next rule is tried', async (t) => {
    const out = route({ plan: 'pro' }, plan('a', 'regex', '(?<=x)pro'), plan('b', 'contains', 'RO'))
    t.same(out.visited, ['start', 'check', 'b'])
    t.equal(out.warnings.length, 1)
    t.match(out.warnings[0], /^rule a of node check: invalid regex: /)
    t.equal(out.status, 'completed')
  })

  t.test('reads system variables before the conversation\'s', async (t) => {
    const bySystem = turn(
      flow([start(), condition('check', { id: 'a', variable: 'externalId', operator: 'equals', value: 'contact-1' }), end('a')], [edge('start', 'check'), edge('check', 'a', 'a')]),
      initialConversation({ externalId: 'shadowed' }),
      START,
      context(),
    )
    t.same(bySystem.visited, ['start', 'check', 'a'])
  })

  t.test('a matching rule without an edge finishes the session', async (t) => {
    const out = turn(
      flow([start(), condition('check', plan('lonely', 'exists')), end('a')], [edge('start', 'check'), edge('check', 'a', 'default')]),
      initialConversation({ plan: 'x' }),
      START,
    )
    t.same(out.visited, ['start', 'check'])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
  })
})
