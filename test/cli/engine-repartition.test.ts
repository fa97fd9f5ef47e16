import { existsSync } from 'node:fs'
import { sql } from 'kysely'
import t from 'tap'
import { ENGINE_LEASE_APPLICATION_NAME, PartitionCountMismatchError, checkPartitionCount, everyPartition, partitionCheckpoint, recordedPartitionCount } from '../../src/engine/partitions.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { advanceCheckpoints, readCheckpoints } from '../../src/projections/checkpoints.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { silentLogger } from '../helpers/app.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath, cliStore, cliStoreNames, runCli, runCliInOneProcess } from '../helpers/cli.js'
import { eventually } from '../helpers/wait.js'

// `flowd engine repartition`: refused while an engine process holds partitions of the sessions
// (leases are Postgres advisory locks held across processes: on Postgres only), done once none
// does, every new partition going on from the earliest old checkpoint.

if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)

t.test('usage errors', async (t) => {
  // A database nothing listens on: refused before it is opened, so with 2 rather than 1; and so in one process.
  const env = { DATABASE_URL: 'postgres://flowd@127.0.0.1:1/unreachable' }
  const cases = [['engine', 'repartition'], ['engine', 'repartition', '--partitions', '0'], ['engine', 'repartition', '--partitions', '257'], ['engine', 'split', '--partitions', '4']]
  const results = await runCliInOneProcess(cases.map((args) => ({ args, env })))
  cases.forEach((args, i) => {
    t.equal(results[i]!.code, 2, `flowd ${args.join(' ')}: ${assertionMessage(results[i]!.stderr.split('\n')[0])}`)
  })
})

for (const name of cliStoreNames) {
  t.test(`repartition on ${name}${name === 'postgres' ? ', refused while an engine process holds partitions' : ''}`, async (t) => {
    const { env, open } = await cliStore(t, name)
    let storage = await open()
    // As the first engine to start leaves it: the count recorded and a checkpoint per partition.
    await checkPartitionCount(storage.db, 16)
    await advanceCheckpoints(storage.db, everyPartition(16).map(partitionCheckpoint), { commit: 5n, prepare: 5n })
    await advanceCheckpoints(storage.db, [partitionCheckpoint(3)], { commit: 3n, prepare: 3n })
    await advanceCheckpoints(storage.db, [partitionCheckpoint(9)], { commit: 9n, prepare: 9n })

    if (name === 'postgres') {
      const store = new PostgresEventStore({ db: storage.db, pool: storage.pool })
      const leases = new AdvisoryLeases(env.DATABASE_URL!, silentLogger, ENGINE_LEASE_APPLICATION_NAME)
      const engine = new ConversationRunner({ db: storage.db, store, readModels: new ProjectionRuntime(storage.db, store, [], silentLogger), logger: silentLogger, leases, partitions: 16 })
      await engine.start()
      const advisoryLocks = async () => Number((await sql<{ n: number }>`select count(*)::integer as n from pg_locks where locktype = 'advisory' and granted`.execute(storage.db)).rows[0]!.n)
      await eventually('the engine to hold every partition and the sweeper', async () => ((await advisoryLocks()) >= 17 ? true : undefined))

      const refused = await runCli(['engine', 'repartition', '--partitions', '4', '--json'], env)
      t.equal(refused.code, 4, assertionMessage(refused.stderr))
      t.match(refused.stderr, /an engine process holds partitions of the sessions: stop every engine process/)
      t.equal(refused.stdout, '')
      t.equal(await recordedPartitionCount(storage.db), 16, 'the count is left as it was')
      await engine.stop()
      await leases.close()
      await store.close()
    }
    // The embedded database is one process's at a time: the command's, now.
    await storage.close()

    const result = await runCli(['engine', 'repartition', '--partitions', '4', '--json'], env)
    t.equal(result.code, 0, assertionMessage(result.stderr))
    t.same(JSON.parse(result.stdout), { from: 16, to: 4, position: '5/5' }, 'every new partition from the earliest old checkpoint')
    const text = await runCli(['engine', 'repartition', '--partitions', '4'], env)
    t.equal(text.code, 0, assertionMessage(text.stderr))
    t.match(text.stdout, /engine partitions: 4 -> 4; every partition goes on from 5\/5\. Start the engines with ENGINE_PARTITIONS=4\./)

    storage = await open()
    t.teardown(() => storage.close())
    t.equal(await recordedPartitionCount(storage.db), 4)
    t.same([...(await readCheckpoints(storage.db, everyPartition(16).map(partitionCheckpoint))).keys()].sort(), everyPartition(4).map(partitionCheckpoint).sort())
    await t.rejects(checkPartitionCount(storage.db, 16), new PartitionCountMismatchError(4, 16), 'an engine with the old count now refuses')
  })
}
