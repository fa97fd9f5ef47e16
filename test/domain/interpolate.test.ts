import t from 'tap'
import { hasPlaceholder, interpolator, lookup, render } from '../../src/domain/interpolate.js'
import { examples } from '../helpers/decider-spec.js'
import { customerVariables as variables } from '../helpers/engine.js'

const system = { sessionId: 's-9', name: 'System', lastMessage: 'hello' }

/** The template filled from `variables` (and `system`, when given), with the unknown paths it met. */
function interpolated(template: string, withSystem = false) {
  const interpolate = interpolator({ system: withSystem ? system : {}, variables })
  return { text: interpolate.text(template), unknown: [...interpolate.unknown] }
}

t.test('interpolator', async (t) => {
  examples(t, interpolated, [
    ['an unknown variable renders empty and is remembered once', ['Hi {{nick}}, {{nick}}! {{other}}'], { text: 'Hi , ! ', unknown: ['nick', 'other'] }],
    ['system variables are read first and shadow conversation variables', ['{{sessionId}} {{name}} {{lastMessage}} {{plan}}', true], { text: 's-9 System hello Pro', unknown: [] }],
    ['dotted paths reach into objects and arrays', ['{{customer.name}} in {{customer.address.city}}, order {{customer.orders.0.id}}'], { text: 'Ana Souza in Recife, order o-1', unknown: [] }],
    ['a missing path is remembered whole', ['[{{customer.address.zip}}][{{plan.length}}]'], { text: '[][]', unknown: ['customer.address.zip', 'plan.length'] }],
    ['non-string values render as text, objects as JSON', ['{{total}} {{vip}} {{customer.address}}'], { text: '99.5 true {"city":"Recife"}', unknown: [] }],
    ['spaces inside the braces are allowed; anything that is not a name stays as written', ['{{ name }} {{1x}} {{ }} {name} {{a-b}}'], { text: 'Ana {{1x}} {{ }} {name} {{a-b}}', unknown: [] }],
    ['inherited properties are not variables', ['[{{constructor}}][{{customer.toString}}][{{__proto__}}]'], { text: '[][][]', unknown: ['constructor', 'customer.toString', '__proto__'] }],
  ])
  const scope = { system: {}, variables: { b: { c: null } } }
  const interpolate = interpolator(scope)
  t.equal(interpolate.text('{{b.c}}|{{zz}}'), '|')
  t.same([...interpolate.unknown], ['zz'], 'a null found is not unknown')
})

t.test('lookup', async (t) => {
  const scope = { system: { a: 1 }, variables: { a: 2, b: { c: null } } }
  examples(t, lookup, [
    ['a system variable shadows the conversation one', [scope, 'a'], 1],
    ['a path to null finds null', [scope, 'b.c'], null],
    ['a path through null finds nothing', [scope, 'b.c.d'], undefined],
  ])
})

t.test('render', async (t) => {
  examples(t, render, [
    ['null reads as nothing', [null], ''],
    ['an array as JSON', [[1, 'x']], '[1,"x"]'],
  ])
})

t.test('hasPlaceholder', async (t) => {
  examples(t, hasPlaceholder, [
    ['a name in braces', ['plan {{ plan }}'], true],
    ['a dotted path', ['{{customer.address.city}}'], true],
    ['braces around what is not a name', ['{{1x}} {{ }} {name}'], false],
    ['no braces', ['plain'], false],
  ])
})
