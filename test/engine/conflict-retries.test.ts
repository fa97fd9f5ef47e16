import t from 'tap'
import { ConflictRetries } from '../../src/engine/conflict-retries.js'
import { Metrics } from '../../src/metrics/registry.js'
import { silentLogger } from '../helpers/app.js'
import { eventually } from '../helpers/wait.js'

/** The database went away: what a try meets during an outage. */
const databaseAway = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })

t.test('a session is tried until its turns are appended, through conflicts and outages, and adopted from the database', async (t) => {
  const parked = new Set(['session-adopted'])
  const outcomes = new Map([['session-adopted', ['conflict', 'outage', 'conflict', 'appended']]])
  const tries: string[] = []
  const metrics = new Metrics(silentLogger, { processMetrics: false })
  const retrying = async () => (await metrics.sessionsRetryingConflicts.get()).values[0]?.value
  const retries: ConflictRetries = new ConflictRetries({
    retry: async (stream) => {
      tries.push(stream)
      const outcome = outcomes.get(stream)?.shift()
      // As the engine does: a turn conflicting again parks its stream again and schedules it.
      if (outcome === 'conflict') retries.schedule(stream)
      else if (outcome === 'outage') throw databaseAway()
      else parked.delete(stream)
    },
    parked: async () => [...parked],
    logger: silentLogger,
    metrics,
    capMs: 20,
  })
  retries.schedule('session-before-start')
  t.equal(await retrying(), 0, 'nothing is scheduled before the engine starts')
  retries.start()
  t.teardown(() => retries.stop())

  await eventually('the adopted session’s turns', async () => (outcomes.get('session-adopted')?.length === 0 && (await retrying()) === 0) || undefined)
  t.same(tries, ['session-adopted', 'session-adopted', 'session-adopted', 'session-adopted'], 'tried again after each conflict and the outage, until its turns are appended')

  parked.add('session-live')
  outcomes.set('session-live', ['appended'])
  retries.schedule('session-live')
  retries.schedule('session-live')
  await eventually('the live session’s turn', async () => (outcomes.get('session-live')?.length === 0 && (await retrying()) === 0) || undefined)
  t.equal(tries.filter((stream) => stream === 'session-live').length, 1, 'a session scheduled twice waits on one timer')
})
