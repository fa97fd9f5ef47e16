import t from 'tap'
import { check, copiedAsWritten, exits, run, schema, writes, type Data } from '../../../src/domain/nodes/set-variable.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog, recordingVisit } from '../../helpers/visit.js'

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['a string', [{ variable: 'plan', value: 'pro' }], true],
    ['an object', [{ variable: 'address', value: { city: 'Recife' } }], true],
    ['no value', [{ variable: 'plan' }], false],
    ['a name that is not a variable name', [{ variable: 'my plan', value: 'pro' }], false],
    ['an array', [{ variable: 'plan', value: ['pro'] }], false],
  ])
})

t.test('check: the value fits the variable', async (t) => {
  const catalog = { ...emptyCatalog, variables: new Map<string, VariableType>([['plan', 'string'], ['vip', 'boolean']]) }
  const problems = function problems(variable: string, value: Data['value']) {
    return checkProblems(check, { variable, value }, catalog)
  }
  examples(t, problems, [
    ['a string into a string variable', ['plan', '{{name}}'], []],
    ['a number into a boolean variable', ['vip', 1], ['variable: variable "vip" holds a boolean, but this value is a number']],
    ['a variable the workspace lacks', ['score', 1], ['variable: no variable "score" in this workspace']],
    ['a system variable', ['sessionId', 'x'], ['variable: "sessionId" is a system variable; it is read-only']],
  ])
})

t.test('run: a string is a template, anything else is copied', async (t) => {
  const object = { city: '{{city}}' }
  const assigned = function assigned(value: Data['value']) {
    const { visit, effects } = recordingVisit({ name: 'Ana' })
    const step = run({ id: 'set', type: 'setVariable', position: { x: 0, y: 0 }, data: { variable: 'v', value } }, visit)
    return { step, effects }
  }
  examples(t, assigned, [
    ['a template filled in', ['Hi {{name}}'], { step: { exit: null }, effects: [{ assign: 'v', value: 'Hi Ana' }] }],
    ['an unknown variable empty, with a warning', ['{{nick}}!'], { step: { exit: null }, effects: [{ warn: 'unknown variable {{nick}}' }, { assign: 'v', value: '!' }] }],
    ['a number', [3], { step: { exit: null }, effects: [{ assign: 'v', value: 3 }] }],
    ['an object as written', [object], { step: { exit: null }, effects: [{ assign: 'v', value: { city: '{{city}}' } }] }],
  ])
  const { visit, effects } = recordingVisit()
  run({ id: 'set', type: 'setVariable', position: { x: 0, y: 0 }, data: { variable: 'v', value: object } }, visit)
  t.not((effects[0] as { value: unknown }).value, object, 'a copy, not the flow\'s own object')
  t.same(exits(), [{ id: null }])
})

t.test('writes and copiedAsWritten', async (t) => {
  examples(t, writes, [
    ['its variable', [{ variable: 'plan' }], 'plan'],
    ['nothing in a draft without one', [{}], undefined],
  ])
  examples(t, copiedAsWritten, [
    ['an object value: its braces are no placeholders', ['value', { a: '{{x}}' }], true],
    ['a string value is a template', ['value', '{{x}}'], false],
    ['the variable name is not copied', ['variable', 3], false],
  ])
})
