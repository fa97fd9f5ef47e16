import t from 'tap'
import { exits, run, schema } from '../../../src/domain/nodes/end.js'
import { accepts, examples } from '../../helpers/decider-spec.js'

t.test('end', async (t) => {
  examples(t, accepts(schema), [
    ['no data', [{}], true],
    ['not an object', ['end'], false],
  ])
  t.same(exits(), [], 'no exit')
  t.equal(run(), 'end', 'ends the flow: the interpreter finishes the session, or returns from a sub-flow')
})
