import { setTimeout as delay } from 'node:timers/promises'
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { allProjections } from '../../src/all-projections.js'
import { organizationsProjection } from '../../src/projections/organizations.js'
import { workspacesProjection } from '../../src/projections/workspaces.js'
import { REBUILD_LEASE, RebuildRunningError, rebuildProjections } from '../../src/projections/rebuild.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import { SHADOW_SCHEMA } from '../../src/projections/shadow.js'
import type { Database } from '../../src/store/database.js'
import { AdvisoryLeases } from '../../src/store/lease.js'
import { silentLogger } from '../helpers/app.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { reachableBackends } from '../helpers/storage.js'

// A rebuild builds its tables in a schema of its own and swaps them in (src/projections/shadow.ts):
// what an earlier one left there is dropped, the rebuild's search path never reaches other users
// of the connection, and one rebuild runs at a time.

for (const backend of reachableBackends) {
  t.test(`rebuilding in the shadow schema, on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const { db } = storage
    const store = new PostgresEventStore({ db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const runtime = new ProjectionRuntime(db, store, allProjections, silentLogger)
    await runtime.start()
    const ctx = { store, readModels: runtime, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }
    await bootstrap(ctx, { organization: 'Shadow Org', workspace: 'One', callbackUrl: null })
    await runtime.stop()
    const before = await readModelRows(db, 'workspaces')

    await t.test('what an interrupted rebuild left is dropped by the next', async (t) => {
      await sql`create schema ${sql.id(SHADOW_SCHEMA)}`.execute(db)
      await sql`create table ${sql.id(SHADOW_SCHEMA, 'workspaces')} (half_built int)`.execute(db)
      // The read model of the table left half-built, beside another: the schema is made once for both.
      const rebuilt = await rebuildProjections(storage, store, [organizationsProjection, workspacesProjection], { concurrency: 2 })
      t.same([...rebuilt.keys()].sort(), [organizationsProjection.name, workspacesProjection.name].sort())
      t.same(await readModelRows(db, 'workspaces'), before)
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${SHADOW_SCHEMA}`.execute(db)
      t.equal(rows[0]!.n, 0, 'the schema is gone once the rebuild ends')
    })

    await t.test("the rebuild's search path stays on its own connections", async (t) => {
      const usual = await searchPathOf(db)
      const seen: string[] = []
      let rebuilding = true
      const rebuilt = rebuildProjections(storage, store, allProjections, { concurrency: 2 }).finally(() => (rebuilding = false))
      // On PGlite the rebuild and these reads take turns on the one connection. Reads 2 ms apart
      // still come between the rebuild's statements all through it, and on Postgres leave the CPU
      // to the rebuild instead of reading the same pooled connection thousands of times.
      while (rebuilding) {
        seen.push(await searchPathOf(db))
        await delay(2)
      }
      await rebuilt
      t.ok(seen.length > 1, 'read while the rebuild ran')
      t.same([...new Set(seen)], [usual], 'every other use of the database resolves names as usual')
      t.equal(await searchPathOf(db), usual)
    })

    if (backend.name === 'postgres') {
      await t.test('one rebuild at a time: another process is refused while one runs', async (t) => {
        const url = (storage.target as { url: string }).url
        const [otherProcess, mine] = [new AdvisoryLeases(url, silentLogger), new AdvisoryLeases(url, silentLogger)]
        t.teardown(async () => {
          await otherProcess.close()
          await mine.close()
        })
        const running = await otherProcess.tryAcquire(REBUILD_LEASE)
        t.ok(running)
        // The lease is the rebuild's whatever it rebuilds: one read model, whose table a rebuild would replace.
        await t.rejects(rebuildProjections(storage, store, [workspacesProjection], { concurrency: 1, leases: mine }), RebuildRunningError)
        t.same(await readModelRows(db, 'workspaces'), before, 'the read models untouched')
        await running!.release()
        t.equal((await rebuildProjections(storage, store, [workspacesProjection], { concurrency: 1, leases: mine })).size, 1)
        t.ok(await otherProcess.tryAcquire(REBUILD_LEASE), 'the rebuild let its lease go')
      })
    }
  })
}

async function searchPathOf(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(db)
  return rows[0]!.path
}
