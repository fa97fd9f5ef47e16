import t from 'tap'
import { BRANCHES, check, exits, run, schema, WEIGHT, type Branch, type Data } from '../../../src/domain/nodes/split.js'
import { initialConversation } from '../../../src/engine/interpreter.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { context, edge, flow, message, split, start, START, text, turn } from '../../helpers/engine.js'
import { checkProblems, emptyCatalog, recordingVisit } from '../../helpers/visit.js'

const branch = (id: string, weight = 50): Branch => ({ id, weight })
const node = (data: Data) => ({ id: 'ab', type: 'split', position: { x: 0, y: 0 }, data })

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['two branches', [{ branches: [branch('a'), branch('b')] }], true],
    [`${BRANCHES.max} branches`, [{ branches: ['a', 'b', 'c', 'd', 'e'].map((id) => branch(id)) }], true],
    [`weights ${WEIGHT.min} and ${WEIGHT.max}`, [{ branches: [branch('a', 1), branch('b', 100)] }], true],
    ['one branch', [{ branches: [branch('a')] }], false],
    ['six branches', [{ branches: ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => branch(id)) }], false],
    ['a weight of 0', [{ branches: [branch('a', 0), branch('b')] }], false],
    ['a weight over 100', [{ branches: [branch('a', 101), branch('b')] }], false],
    ['a weight of a fraction', [{ branches: [branch('a', 12.5), branch('b')] }], false],
    ['a branch without a weight', [{ branches: [{ id: 'a' }, branch('b')] }], false],
    ['a branch with an empty id', [{ branches: [branch(''), branch('b')] }], false],
    ['no branches', [{}], false],
  ])
})

t.test('exits: one per branch, in order', async (t) => {
  t.same(exits({ branches: [branch('a', 90), branch('b', 10)] }), [
    { id: 'a', label: 'a' },
    { id: 'b', label: 'b' },
  ])
  t.same(exits({}), [], 'a draft without branches')
})

t.test('check: branch ids are distinct handles', async (t) => {
  const problems = function problems(...branches: Branch[]) {
    return checkProblems(check, { branches }, emptyCatalog)
  }
  examples(t, problems, [
    ['distinct ids', [branch('a'), branch('b')], []],
    ['an id used twice', [branch('a'), branch('a')], ['branches.1.id: duplicate id "a"; each one is a handle of its own']],
    ['default and invalid are ids like any other: a split has no fixed exit', [branch('default'), branch('invalid')], []],
  ])
})

t.test('run: leaves by the branch the visit draws from its weights', async (t) => {
  const ran = function ran(data: Data, drawn: string[]) {
    const { visit, effects } = recordingVisit({}, null, [], [], drawn)
    return { step: run(node(data), visit), effects }
  }
  const ab = { branches: [branch('a', 70), branch('b', 30)] }
  examples(t, ran, [
    ['the branch drawn', [ab, ['b']], { step: { exit: 'b' }, effects: [{ choose: ab.branches }] }],
    ['another draw, another branch', [ab, ['a']], { step: { exit: 'a' }, effects: [{ choose: ab.branches }] }],
  ])
})

t.test('a split node in a turn records the branch it took', async (t) => {
  const abFlow = flow(
    [start(), split('ab', branch('a', 1), branch('b', 3)), message('a', text('A')), message('b', text('B'))],
    [edge('start', 'ab'), edge('ab', 'a', 'a'), edge('ab', 'b', 'b')],
  )
  const drawing = function drawing(draw: number) {
    const { visited, choices } = turn(abFlow, initialConversation(), START, context({ random: () => draw }))
    return { visited, choices }
  }
  examples(t, drawing, [
    ['a draw in the first quarter takes a', [0.2], { visited: ['start', 'ab', 'a'], choices: [{ nodeId: 'ab', branchId: 'a' }] }],
    ['a draw past it takes b', [0.25], { visited: ['start', 'ab', 'b'], choices: [{ nodeId: 'ab', branchId: 'b' }] }],
  ])
})
