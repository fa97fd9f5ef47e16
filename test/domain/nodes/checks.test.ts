import t from 'tap'
import { article, checkHandleIds, checkTarget } from '../../../src/domain/nodes/checks.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog } from '../../helpers/visit.js'

const catalog = { ...emptyCatalog, variables: new Map<string, VariableType>([['age', 'number'], ['photo', 'object']]) }

t.test('checkTarget', async (t) => {
  const problems = function problems(name: string, saved: VariableType) {
    return checkProblems((_: null, context) => checkTarget(name, saved, 'it saves more', ['saveAs'], context), null, catalog)
  }
  examples(t, problems, [
    ['a workspace variable of the type saved', ['age', 'number'], []],
    ['of another type', ['photo', 'string'], ['saveAs: variable "photo" holds an object, but it saves more']],
    ['a name the workspace lacks', ['score', 'number'], ['saveAs: no variable "score" in this workspace']],
    ['a system variable, even one the workspace also names', ['externalId', 'string'], ['saveAs: "externalId" is a system variable; it is read-only']],
  ])
})

t.test('checkHandleIds', async (t) => {
  const problems = function problems(...ids: string[]) {
    return checkProblems((_: null, context) => checkHandleIds(ids.map((id, i) => ({ id, at: ['ids', i] })), context, { handle: 'default', of: 'the default exit' }), null, catalog)
  }
  examples(t, problems, [
    ['distinct ids', ['a', 'b'], []],
    ['the second of a repeated id, once', ['a', 'a', 'a'], ['ids.1: duplicate id "a"; each one is a handle of its own', 'ids.2: duplicate id "a"; each one is a handle of its own']],
    ['the fixed handle', ['default'], ['ids.0: "default" is the handle of the default exit; choose another id']],
  ])
  const withoutFixedHandle = function withoutFixedHandle(...ids: string[]) {
    return checkProblems((_: null, context) => checkHandleIds(ids.map((id, i) => ({ id, at: ['ids', i] })), context), null, catalog)
  }
  examples(t, withoutFixedHandle, [
    ['a node without a fixed handle takes any distinct ids', ['default', 'invalid'], []],
    ['and refuses a repeated one', ['a', 'a'], ['ids.1: duplicate id "a"; each one is a handle of its own']],
  ])
})

t.test('article', async (t) => {
  examples(t, article, [
    ['an object', ['object'], 'an object'],
    ['a string', ['string'], 'a string'],
  ])
})
