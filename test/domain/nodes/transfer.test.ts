import t from 'tap'
import { check, exits, run, schema } from '../../../src/domain/nodes/transfer.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { AGENT, SECTOR, transfer } from '../../helpers/engine.js'
import { checkProblems, emptyCatalog, recordingVisit } from '../../helpers/visit.js'

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['to a sector', [{ targetType: 'sector', targetId: SECTOR }], true],
    ['to an agent', [{ targetType: 'agent', targetId: AGENT }], true],
    ['to a queue', [{ targetType: 'queue', targetId: SECTOR }], false],
    ['to an id that is no uuid', [{ targetType: 'agent', targetId: 'ana' }], false],
  ])
})

t.test('check: a sector must be the workspace\'s; agents are not known to it', async (t) => {
  const catalog = { ...emptyCatalog, sectorIds: new Set([SECTOR]) }
  const problems = function problems(targetType: 'sector' | 'agent', targetId: string) {
    return checkProblems(check, { targetType, targetId }, catalog)
  }
  examples(t, problems, [
    ['a sector of the workspace', ['sector', SECTOR], []],
    ['an agent', ['agent', AGENT], []],
    ['a sector of another workspace', ['sector', AGENT], [`targetId: no sector "${AGENT}" in this workspace`]],
  ])
})

t.test('run: calls transfer and completes, with no exit', async (t) => {
  const node = transfer('human', 'agent', AGENT)
  if (node.type !== 'transfer') return t.fail('a transfer node')
  const { visit, effects } = recordingVisit()
  t.equal(run(node, visit), 'complete')
  t.same(effects, [{ call: { type: 'transfer', targetType: 'agent', targetId: AGENT } }])
  t.same(exits(), [])
})
