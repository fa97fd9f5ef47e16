import t from 'tap'
import { exits, run, schema } from '../../../src/domain/nodes/start.js'
import { accepts, examples } from '../../helpers/decider-spec.js'

t.test('start', async (t) => {
  examples(t, accepts(schema), [
    ['no data', [{}], true],
    ['not an object', [null], false],
  ])
  t.same(exits(), [{ id: null }], 'one unnamed exit')
  t.same(run(), { exit: null }, 'runs on by it at once')
})
