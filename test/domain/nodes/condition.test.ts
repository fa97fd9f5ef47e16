import t from 'tap'
import { check, exits, schema, type Rule } from '../../../src/domain/nodes/condition.js'
import type { VariableValue } from '../../../src/domain/turn.js'
import { initialConversation } from '../../../src/engine/interpreter.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { condition, context, edge, end, flow, message, NOW, start, START, text, turn } from '../../helpers/engine.js'
import { checkProblems, emptyCatalog } from '../../helpers/visit.js'

const rule = (operator: Rule['operator'], value?: Rule['value']): Rule => ({ id: 'r', variable: 'v', operator, ...(value !== undefined && { value }) })

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['rules with and without a value', [{ rules: [rule('exists'), rule('gt', 3), rule('equals', true)] }], true],
    ['no rules', [{ rules: [] }], false],
    ['an operator it does not know', [{ rules: [{ ...rule('equals', 'x'), operator: 'is' }] }], false],
    ['a rule without an id', [{ rules: [{ ...rule('exists'), id: '' }] }], false],
    ['an object as the value', [{ rules: [{ ...rule('equals'), value: { a: 1 } }] }], false],
  ])
})

t.test('exits: one per rule, in order, then default', async (t) => {
  t.same(exits({ rules: [{ ...rule('exists'), id: 'yes' }, { ...rule('exists'), id: 'no' }] }), [{ id: 'yes', label: 'yes' }, { id: 'no', label: 'no' }, { id: 'default', label: 'default', kind: 'default' }])
  t.same(exits({}), [{ id: 'default', label: 'default', kind: 'default' }], 'a draft without rules')
})

t.test('check', async (t) => {
  const problems = function problems(...rules: Rule[]) {
    return checkProblems(check, { rules }, emptyCatalog, ['v'])
  }
  examples(t, problems, [
    ['known variables, numbers for numeric operators, a valid pattern', [rule('gt', '18,5'), { ...rule('regex', '^a'), id: 's' }], []],
    ['an unknown variable', [{ ...rule('exists'), variable: 'w' }], ['rules.0.variable: unknown variable "w"']],
    ['a numeric operator on text', [rule('lte', 'ten')], ['rules.0.value: lte compares numbers; value must be a number']],
    ['a numeric operator without a value', [rule('gt')], ['rules.0.value: gt compares numbers; value must be a number']],
    ['a rule id used twice', [rule('exists'), rule('exists')], ['rules.1.id: duplicate id "r"; each one is a handle of its own']],
    ['a rule named as the default exit', [{ ...rule('exists'), id: 'default' }], ['rules.0.id: "default" is the handle of the default exit; choose another id']],
  ])
  const [lookbehind] = problems(rule('regex', '(?<=x)y'))
  t.match(lookbehind, /^rules\.0\.value: not a valid regular expression: /, 'a pattern RE2 refuses')
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
