import { randomUUID } from 'node:crypto'
import { Kysely, PostgresDialect } from 'kysely'
import t from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { bootstrap } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { matchesFilter } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import type { Projection } from '../../src/projections/projection.js'
import type { Database } from '../../src/store/database.js'
import { PreparingClient } from '../../src/store/prepared.js'
import { appOver, silentLogger } from '../helpers/app.js'
import { postgresBackend, postgresUrl, separatePool } from '../helpers/storage.js'

/** Every statement sent on the pool's connections; while `held` is set, statements wait for it first. */
const sent = { count: 0, held: undefined as Promise<void> | undefined }

class CountingClient extends PreparingClient {
  // `any`: pg's overloads, passed through unchanged.
  override query(config: any, values?: any, callback?: any): any {
    sent.count++
    const held = sent.held
    if (held && typeof callback !== 'function' && typeof values !== 'function') return held.then(() => super.query(config, values))
    return super.query(config, values, callback)
  }
}

if (postgresUrl) {
  t.test('readiness on Postgres', async (t) => {
    const storage = await postgresBackend.open(t)
    const pool = separatePool({ connectionString: (storage.target as { url: string }).url, max: 24, Client: CountingClient })
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    t.teardown(() => db.destroy())
    const store = new PostgresEventStore({ db, pollIntervalMs: 50 })
    t.teardown(() => store.close())

    // Some events in the log, every read model caught up with them, then stopped: nothing else queries.
    const live = new ProjectionRuntime(db, store, allProjections, silentLogger)
    await live.start()
    await bootstrap({ store, readModels: live, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
    t.same((await live.status(5000)).filter((s) => !s.caughtUp).map((s) => s.name), [], 'the read models caught up')
    await live.stop()

    const appWith = (projections: readonly Projection[]) => appOver(t, db, store, { config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' }), projections })
    const statementsOfOneProbe = async (app: Awaited<ReturnType<typeof appWith>>) => {
      const before = sent.count
      const response = await app.inject({ method: 'GET', url: '/readyz' })
      t.equal(response.statusCode, 200, 'ready')
      return sent.count - before
    }

    t.ok(allProjections.length > 2, 'the full set is more than two read models')
    const all = await statementsOfOneProbe(await appWith(allProjections))
    const two = await statementsOfOneProbe(await appWith(allProjections.slice(0, 2)))
    t.equal(all, 1, 'a probe is one statement')
    t.equal(all, two, 'whatever the number of read models')

    await t.test('probes that arrive while one runs share its statement', async (t) => {
      const app = await appWith(allProjections)
      let arrived = 0
      app.addHook('preHandler', async () => {
        arrived++
      })
      let release!: () => void
      sent.held = new Promise((resolve) => (release = resolve))
      const before = sent.count
      const probes = Array.from({ length: 10 }, () => app.inject({ method: 'GET', url: '/readyz' }))
      while (arrived < 10 || sent.count === before) await new Promise((resolve) => setTimeout(resolve, 5))
      // The handlers run right after the last hook; one more turn of the loop lets the last one join.
      await new Promise((resolve) => setImmediate(resolve))
      sent.held = undefined
      release()
      const responses = await Promise.all(probes)
      t.same(responses.map((r) => r.statusCode), Array(10).fill(200), 'every probe answered ready')
      t.equal(sent.count - before, all, 'ten probes, the statements of one')
    })

    await t.test('an event no read model has applied: not ready, naming those that read its stream and no other', async (t) => {
      const app = await appWith(allProjections)
      const stream = `workspace-${randomUUID()}`
      await store.append(stream, [{ id: randomUUID(), type: 'Unapplied', data: {} }], { expectedRevision: 'no_stream' })
      const response = await app.inject({ method: 'GET', url: '/readyz' })
      t.equal(response.statusCode, 503, 'not ready')
      const lagging = allProjections.filter((p) => matchesFilter(stream, { streamPrefixes: p.streamPrefixes })).map((p) => p.name)
      t.ok(lagging.length > 0 && lagging.length < allProjections.length, 'some read models read the stream, not all')
      t.same(
        response.json().checks,
        [
          { name: 'database', ok: true },
          { name: 'eventStore', ok: true },
          { name: 'projections', ok: false, detail: `behind: ${lagging.join(', ')}` },
        ],
        'the checks name the read models behind',
      )
    })
  })
} else {
  t.test('readiness on Postgres', { skip: 'DATABASE_URL is not set' }, () => {})
}
