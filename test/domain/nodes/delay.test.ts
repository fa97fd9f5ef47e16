import t from 'tap'
import { DELAY_SECONDS, exits, holdsReplies, run, schema, wake } from '../../../src/domain/nodes/delay.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { recordingVisit, VISIT_NOW } from '../../helpers/visit.js'

const node = (seconds: number) => ({ id: 'pause', type: 'delay', position: { x: 0, y: 0 }, data: { seconds } })

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    [`the shortest delay, ${DELAY_SECONDS.min} s`, [{ seconds: 1 }], true],
    [`the longest, ${DELAY_SECONDS.max} s (a day)`, [{ seconds: 86_400 }], true],
    ['no delay', [{ seconds: 0 }], false],
    ['over a day', [{ seconds: 86_401 }], false],
    ['a fraction of a second', [{ seconds: 1.5 }], false],
    ['no seconds', [{}], false],
  ])
})

t.test('one unnamed exit; messages that come meanwhile are held', async (t) => {
  t.same(exits(), [{ id: null }])
  t.equal(holdsReplies, true)
})

t.test('run waits with a timer `seconds` from now; its timer goes on by the exit', async (t) => {
  const ran = recordingVisit()
  t.equal(run(node(90), ran.visit), 'wait')
  t.same(ran.effects, [{ wait: 0, timer: { until: VISIT_NOW + 90_000 } }])
  const woken = recordingVisit()
  t.same(wake(node(90), woken.visit), { exit: null })
  t.same(woken.effects, ['stopWaiting'])
})
