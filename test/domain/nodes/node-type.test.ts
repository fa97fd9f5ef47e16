import t from 'tap'
import { nodeTypes, type NodeTypeName } from '../../../src/domain/nodes/index.js'
import { DEFAULT_HANDLE, INVALID_HANDLE, NO_EXITS, UNNAMED_EXIT } from '../../../src/domain/nodes/node-type.js'
import { examples } from '../../helpers/decider-spec.js'

// The NodeType contract as the registry's types hold to it; each type's own spec is beside this one.

t.test('the exits of a draft with no data yet, which the editor draws', async (t) => {
  const draftExits = function draftExits(type: NodeTypeName) {
    return nodeTypes[type].exits({}).map((exit) => exit.id)
  }
  examples(t, draftExits, [
    ['start: the unnamed exit', ['start'], [null]],
    ['message: the unnamed exit', ['message'], [null]],
    ['question: default and invalid', ['question'], [DEFAULT_HANDLE, INVALID_HANDLE]],
    ['condition: default', ['condition'], [DEFAULT_HANDLE]],
    ['setVariable: the unnamed exit', ['setVariable'], [null]],
    ['transfer: none', ['transfer'], []],
    ['kanbanMove: the unnamed exit', ['kanbanMove'], [null]],
    ['end: none', ['end'], []],
  ])
})

t.test('what a type needs beyond schema, exits and run', async (t) => {
  const optional = function optional(type: NodeTypeName) {
    return (['resume', 'check', 'messages', 'writes', 'copiedAsWritten'] as const).filter((member) => member in nodeTypes[type])
  }
  examples(t, optional, [
    ['start: nothing', ['start'], []],
    ['message: its messages', ['message'], ['messages']],
    ['question: it waits, checks, sends and saves', ['question'], ['resume', 'check', 'messages', 'writes']],
    ['condition: checks', ['condition'], ['check']],
    ['setVariable: checks, saves, and copies objects', ['setVariable'], ['check', 'writes', 'copiedAsWritten']],
    ['transfer: checks', ['transfer'], ['check']],
    ['kanbanMove: checks', ['kanbanMove'], ['check']],
    ['end: nothing', ['end'], []],
  ])
})

t.test('the handles', async (t) => {
  t.same(UNNAMED_EXIT, [{ id: null }], 'the unnamed exit is the handle null')
  t.same(NO_EXITS, [])
  t.same([DEFAULT_HANDLE, INVALID_HANDLE], ['default', 'invalid'], 'as flow definitions name them')
})
