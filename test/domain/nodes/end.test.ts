import t from 'tap'
import { exits, run, schema } from '../../../src/domain/nodes/end.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { recordingVisit } from '../../helpers/visit.js'

t.test('end', async (t) => {
  examples(t, accepts(schema), [
    ['no data', [{}], true],
    ['not an object', ['end'], false],
  ])
  t.same(exits(), [], 'no exit')
  const { visit, effects } = recordingVisit()
  t.equal(run({}, visit), 'complete', 'completes the session')
  t.same(effects, [{ call: { type: 'finish' } }], 'after calling finish')
})
