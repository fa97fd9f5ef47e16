import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { ENGINE_LEASE_APPLICATION_NAME, PartitionCountMismatchError, checkPartitionCount, everyPartition, partitionCheckpoint, recordedPartitionCount } from '../../src/engine/partitions.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { advanceCheckpoints, readCheckpoints } from '../../src/projections/checkpoints.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { openStorage } from '../../src/store/connect.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { silentLogger } from '../helpers/app.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { cliPath, runCli } from '../helpers/cli.js'
import { migratedDataDir } from '../helpers/pglite-template.js'
import { createTestDatabase, postgresUrl } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// `flowd engine repartition`: refused while an engine process holds partitions of the sessions,
// done once none does; on the embedded database, with the service stopped.

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

t.test('usage errors', async (t) => {
  const dataDir = await migratedDataDir(t)
  for (const args of [['engine', 'repartition'], ['engine', 'repartition', '--partitions', '0'], ['engine', 'repartition', '--partitions', '257'], ['engine', 'split', '--partitions', '4']]) {
    const result = await runCli(args, { DATA_DIR: dataDir })
    t.equal(result.code, 2, `flowd ${args.join(' ')}: ${assertionMessage(result.stderr.split('\n')[0])}`)
  }
})

t.test('on the embedded database', async (t) => {
  const dataDir = await migratedDataDir(t)
  const open = () => openStorage({ kind: 'pglite', dataDir: join(dataDir, 'pglite') })
  let storage = await open()
  // As the first engine to start leaves it: the count recorded and a checkpoint per partition.
  await checkPartitionCount(storage.db, 16)
  await advanceCheckpoints(storage.db, everyPartition(16).map(partitionCheckpoint), { commit: 5n, prepare: 5n })
  await advanceCheckpoints(storage.db, [partitionCheckpoint(3)], { commit: 3n, prepare: 3n })
  await advanceCheckpoints(storage.db, [partitionCheckpoint(9)], { commit: 9n, prepare: 9n })
  await storage.close()

  const result = await runCli(['engine', 'repartition', '--partitions', '4', '--json'], { DATA_DIR: dataDir })
  t.equal(result.code, 0, assertionMessage(result.stderr))
  t.same(JSON.parse(result.stdout), { from: 16, to: 4, position: '5/5' }, 'every new partition from the earliest old checkpoint')
  storage = await open()
  t.teardown(() => storage.close())
  t.equal(await recordedPartitionCount(storage.db), 4)
  t.same([...(await readCheckpoints(storage.db, everyPartition(16).map(partitionCheckpoint))).keys()].sort(), everyPartition(4).map(partitionCheckpoint).sort())
  await t.rejects(checkPartitionCount(storage.db, 16), new PartitionCountMismatchError(4, 16), 'an engine with the old count now refuses')
})

t.test('refused while an engine process holds partitions (Postgres)', { skip: postgresUrl ? false : 'DATABASE_URL is unset: leases are Postgres advisory locks' }, async (t) => {
  const database = await createTestDatabase()
  const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 })
  t.teardown(async () => {
    await storage.close()
    await database.drop()
  })
  await migrateToLatest(storage.db)
  const store = new PostgresEventStore({ db: storage.db, pool: storage.pool })
  const leases = new AdvisoryLeases(database.url, silentLogger, ENGINE_LEASE_APPLICATION_NAME)
  const engine = new ConversationRunner({ db: storage.db, store, readModels: new ProjectionRuntime(storage.db, store, [], silentLogger), logger: silentLogger, leases, partitions: 16 })
  await engine.start()
  const advisoryLocks = async () => Number((await sql<{ n: number }>`select count(*)::integer as n from pg_locks where locktype = 'advisory' and granted`.execute(storage.db)).rows[0]!.n)
  await eventually('the engine to hold every partition and the sweeper', async () => ((await advisoryLocks()) >= 17 ? true : undefined))

  const refused = await runCli(['engine', 'repartition', '--partitions', '8', '--json'], { DATABASE_URL: database.url })
  t.equal(refused.code, 4, assertionMessage(refused.stderr))
  t.match(refused.stderr, /an engine process holds partitions of the sessions: stop every engine process/)
  t.equal(refused.stdout, '')
  t.equal(await recordedPartitionCount(storage.db), 16, 'the count is left as it was')

  await engine.stop()
  await leases.close()
  const done = await runCli(['engine', 'repartition', '--partitions', '8', '--json'], { DATABASE_URL: database.url })
  t.equal(done.code, 0, assertionMessage(done.stderr))
  t.match(JSON.parse(done.stdout), { from: 16, to: 8 })
  t.equal(await recordedPartitionCount(storage.db), 8)
  const text = await runCli(['engine', 'repartition', '--partitions', '8'], { DATABASE_URL: database.url })
  t.equal(text.code, 0, assertionMessage(text.stderr))
  t.match(text.stdout, /engine partitions: 8 -> 8; .*ENGINE_PARTITIONS=8/)
  await store.close()
})
