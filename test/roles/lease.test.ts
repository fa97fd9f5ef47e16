import { randomUUID } from 'node:crypto'
import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { WakeUp } from '../../src/eventstore/wake-up.js'
import { allProjections } from '../../src/all-projections.js'
import { CHECKPOINTS_CHANNEL, ProjectionRuntime } from '../../src/projections/runtime.js'
import { AdvisoryLeases, whileLeased, type Leases } from '../../src/store/lease.js'
import { silentLogger } from '../helpers/app.js'
import { postgresBackend, postgresUrl } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Leases (Postgres advisory locks) and read-your-writes across processes, in one test process:
// each AdvisoryLeases has a connection of its own, as each process would.

const skip = postgresUrl ? false : 'DATABASE_URL is unset: leases are Postgres advisory locks (the embedded database is one process and takes none)'

t.test('advisory leases on Postgres', { skip }, async (t) => {
  const storage = await postgresBackend.open(t)
  const url = (storage.target as { url: string }).url
  const leases = () => {
    const l = new AdvisoryLeases(url, silentLogger)
    t.teardown(() => l.close())
    return l
  }

  await t.test('a lease is held by one holder at a time, and is free again once its holder is gone', async (t) => {
    const [a, b] = [leases(), leases()]
    const held = await a.tryAcquire('alpha')
    t.ok(held, 'the first holder takes it')
    t.equal(await b.tryAcquire('alpha'), undefined, 'a second process does not')
    t.equal(await a.tryAcquire('alpha'), undefined, 'nor does the holder a second time (locks nest in a session)')
    t.ok(await b.tryAcquire('beta'), 'another name is another lease')
    await held!.release()
    t.ok(held!.lost.aborted, 'a released lease reads as lost')
    const taken = await b.tryAcquire('alpha')
    t.ok(taken, 'released, it can be taken by the other')
    await b.close()
    t.ok(taken!.lost.aborted, "closing the holder's connection loses its leases")
    t.ok(await a.tryAcquire('alpha'), 'and frees them for the others')
  })

  await t.test('a standby takes the work over when the active holder dies, never running beside it', async (t) => {
    const [a, b] = [leases(), leases()]
    const running = new Set<string>()
    const overlaps: string[] = []
    const work = (who: string) => async (signal: AbortSignal) => {
      if (running.size > 0) overlaps.push(`${who} started while ${[...running].join(', ')} ran`)
      running.add(who)
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
      running.delete(who)
    }
    const stopA = new AbortController()
    const stopB = new AbortController()
    const loopA = whileLeased(a, 'engine-test', stopA.signal, work('a'), silentLogger, 50)
    await eventually('a to be active', () => (running.has('a') ? true : undefined), 5000)
    let refusals = 0
    const askingB: Leases = {
      async tryAcquire(name) {
        const lease = await b.tryAcquire(name)
        if (!lease) refusals++
        return lease
      },
      processes: () => b.processes(),
      close: () => b.close(),
    }
    const loopB = whileLeased(askingB, 'engine-test', stopB.signal, work('b'), silentLogger, 50)
    await eventually('b to be refused three times', () => (refusals >= 3 ? true : undefined), 5000)
    t.same([...running], ['a'], 'the standby, refused three times, does not run while the holder does')
    // The holder's database session ends, as when its process is killed.
    await a.close()
    await eventually('b to take over', () => (running.has('b') ? true : undefined), 5000)
    t.same(overlaps, [], 'never two at once')
    stopA.abort()
    stopB.abort()
    await Promise.all([loopA, loopB])
    t.same([...running], [], 'both stopped')
  })

  await t.test("a runtime that applies nothing waits for another's read models through the stored checkpoints", async (t) => {
    const store = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 50 })
    t.teardown(() => store.close())
    const projectorSide = new WakeUp(CHECKPOINTS_CHANNEL, storage.pool)
    const apiSide = new WakeUp(CHECKPOINTS_CHANNEL, storage.pool)
    t.teardown(async () => {
      await projectorSide.close()
      await apiSide.close()
    })
    const projector = new ProjectionRuntime(storage.projectorDb, store, allProjections, silentLogger, { leases: leases(), checkpointsMoved: projectorSide })
    const api = new ProjectionRuntime(storage.projectorDb, store, allProjections, silentLogger, { leases: leases(), checkpointsMoved: apiSide })
    await projector.start()
    t.teardown(() => projector.stop())
    const ctx = { store, readModels: api, logger: silentLogger, now: () => new Date(), metadata: { actor: 'test' } }
    const { workspaceId } = await bootstrap(ctx, { organization: 'Org', workspace: `W ${randomUUID()}`, callbackUrl: null })
    const row = await storage.db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()
    t.equal(row?.id, workspaceId, 'a write through the waiting runtime is visible when it returns')
    const appended = await store.append(`workspace-${randomUUID()}`, [{ id: randomUUID(), type: 'Unrelated', data: {} }], { expectedRevision: 'no_stream' })
    t.equal(await api.waitFor('workspace-x', appended.position, { timeoutMs: 10_000 }), true, "its wait ends reached once the other runtime's checkpoints pass the write")
    t.ok(
      (await api.status(5000)).every((s) => s.caughtUp),
      'the waiting runtime reports the read models caught up from their stored checkpoints',
    )
    await projector.stop()
    const { position } = await store.append(`workspace-${randomUUID()}`, [{ id: randomUUID(), type: 'Unrelated', data: {} }], { expectedRevision: 'no_stream' })
    t.equal(await api.waitFor('workspace-x', position, { timeoutMs: 300 }), false, 'with nobody applying, the wait ends unreached at its bound')
  })
})
