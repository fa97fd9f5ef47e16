import t from 'tap'
import { ENGINE_LEASE_APPLICATION_NAME, PartitionLeases, fairShare } from '../../src/engine/partitions.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { silentLogger } from '../helpers/app.js'
import { eventually } from '../helpers/wait.js'
import { createTestDatabase, postgresUrl } from '../helpers/storage.js'

// Partition leases of engines in one test process, each with a lease connection of its own as
// each process would have. Engine processes sharing the partitions of the sessions (three split
// them with one sweeping, the sweeper and another SIGKILLed, a fourth joining) are proved by the
// deployment of test/roles/deployment.test.ts.

const skip = postgresUrl ? false : 'DATABASE_URL is unset: engines share partitions through Postgres leases'

t.test('partition leases: a process hands a partition back only once it stopped driving it', { skip }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const count = 4
  const driving = new Map<string, number[]>()
  const overlaps: string[] = []
  const engine = (name: string) => {
    let alive = true
    const leases = new AdvisoryLeases(database.url, silentLogger, ENGINE_LEASE_APPLICATION_NAME)
    const partitions = new PartitionLeases(
      leases,
      count,
      async (held) => {
        if (!alive) return
        for (const [other, theirs] of driving) if (other !== name && theirs.some((p) => held.includes(p))) overlaps.push(`${name} drives ${held.join()} while ${other} drives ${theirs.join()}`)
        driving.set(name, held)
      },
      silentLogger,
      50,
    )
    const stop = new AbortController()
    const running = partitions.run(stop.signal)
    const halt = async () => {
      stop.abort()
      await running
      await leases.close()
    }
    t.teardown(halt)
    /** As when its process is killed: it drives nothing any more, and its database session ends. */
    const kill = async () => {
      alive = false
      driving.delete(name)
      await leases.close()
    }
    return { kill }
  }
  const spread = (names: string[], share: number) => () => {
    const sets = names.map((name) => driving.get(name) ?? [])
    const all = sets.flat()
    return sets.every((set) => set.length <= share) && new Set(all).size === count && all.length === count ? true : undefined
  }

  engine('a')
  await eventually('a alone to drive every partition', spread(['a'], count))
  const b = engine('b')
  await eventually('a and b to share them', spread(['a', 'b'], fairShare(count, 2)))
  t.pass('a joining engine gets a share: the first hands partitions back')
  await b.kill()
  await eventually('a to drive every partition again', spread(['a'], count))
  t.pass("the survivor takes a dead engine's partitions")
  t.same(overlaps, [], 'no partition was driven by two engines at once')
})
