import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import t from 'tap'
import type { Database } from '../../src/store/database.js'
import { claimDueDeliveries, recordAttempts, type ClaimedDelivery } from '../../src/webhooks/deliveries.js'
import { listDestinations, recordDestinationHealth } from '../../src/webhooks/destinations.js'
import { pendingDelivery } from '../helpers/deliveries.js'
import { reachableBackends } from '../helpers/storage.js'

// Claims are fair between tenants: a destination never gets more than its room, the claim goes
// round organizations and destinations instead of down one queue, and a failing destination gets
// one probe at a time, when it is due.

const now = new Date('2026-11-28T12:00:00.000Z')
let position = 0

interface Tenant {
  organizationId: string
  workspaceId: string
}
const tenant = (): Tenant => ({ organizationId: randomUUID(), workspaceId: randomUUID() })

/** `count` due deliveries of `tenant` to `callbackUrl`, each of a session of its own, after every one inserted before. */
async function deliveries(db: Kysely<Database>, who: Tenant, callbackUrl: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID())
  await db
    .insertInto('webhook_deliveries')
    .values(
      ids.map((id) =>
        pendingDelivery({
          id,
          organization_id: who.organizationId,
          workspace_id: who.workspaceId,
          callback_url: callbackUrl,
          destination: new URL(callbackUrl).origin,
          source_prepare: String(++position),
          created_at: now,
        }),
      ),
    )
    .execute()
  return ids
}

const claim = (db: Kysely<Database>, options: Partial<Parameters<typeof claimDueDeliveries>[1]> = {}) =>
  claimDueDeliveries(db, { now, limit: 10, leaseMs: 15_000, firstDelaySeconds: 0, perDestination: 4, ...options })

const origins = (claimed: ClaimedDelivery[]) => claimed.map((d) => d.destination).sort()

/**
 * Empties the tables claims read and write, so that each case claims from its own deliveries and
 * destinations alone: the cases of a store share one database.
 */
async function emptied(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('webhook_attempts').execute()
  await db.deleteFrom('webhook_deliveries').execute()
  await db.deleteFrom('webhook_destinations').execute()
}

for (const backend of reachableBackends) {
  t.test(`fair claims on ${backend.name}`, async (t) => {
    const { db } = await backend.open(t)
    await t.test('a destination with a backlog takes its room; the others behind it are claimed in the same round', async (t) => {
      await emptied(db)
      const busy = tenant()
      const quiet = tenant()
      await deliveries(db, busy, 'https://busy.example.com/hooks', 50)
      await deliveries(db, quiet, 'https://quiet.example.com/hooks', 2)
      const claimed = await claim(db)
      t.equal(claimed.filter((d) => d.destination === 'https://busy.example.com').length, 4, 'the busy destination: its room of four')
      t.equal(claimed.filter((d) => d.destination === 'https://quiet.example.com').length, 2, 'the quiet one behind it: both of its deliveries')
      t.same(claimed[0] && Object.keys(claimed[0]).includes('probe') && claimed.every((d) => !d.probe), true, 'no probe among healthy destinations')
    })

    await t.test('attempts in flight here count against the room; a full destination is passed over in the scan', async (t) => {
      await emptied(db)
      const busy = tenant()
      const quiet = tenant()
      await deliveries(db, busy, 'https://busy.example.com/hooks', 60)
      await deliveries(db, quiet, 'https://quiet.example.com/hooks', 1)
      const inFlight = [{ workspaceId: busy.workspaceId, destination: 'https://busy.example.com', attempts: 3 }]
      t.same(origins(await claim(db, { inFlight })), ['https://busy.example.com', 'https://quiet.example.com'], 'one more to the busy destination, and the quiet one')
      const full = [{ workspaceId: busy.workspaceId, destination: 'https://busy.example.com', attempts: 4 }]
      t.same(origins(await claim(db, { inFlight: full })), [], 'nothing more to a full destination, although 59 of its deliveries are due')
    })

    await t.test('the same origin in two workspaces is two destinations: one tenant filling it leaves the other its room', async (t) => {
      await emptied(db)
      const one = tenant()
      const other = tenant()
      await deliveries(db, one, 'https://hooks.shared.example/one', 30)
      await deliveries(db, other, 'https://hooks.shared.example/other', 3)
      const inFlight = [{ workspaceId: one.workspaceId, destination: 'https://hooks.shared.example', attempts: 4 }]
      const claimed = await claim(db, { inFlight })
      t.same(claimed.map((d) => d.workspaceId), [other.workspaceId, other.workspaceId, other.workspaceId])
    })

    await t.test('a claim smaller than the queue goes round the organizations, oldest first within each', async (t) => {
      await emptied(db)
      const a = tenant()
      const b = tenant()
      const c = tenant()
      const aIds = [
        ...(await deliveries(db, a, 'https://a1.example.com/h', 3)),
        ...(await deliveries(db, a, 'https://a2.example.com/h', 3)),
      ]
      const bIds = await deliveries(db, b, 'https://b.example.com/h', 3)
      const cIds = await deliveries(db, c, 'https://c.example.com/h', 1)
      const claimed = await claim(db, { limit: 4, perDestination: 10 })
      t.same(new Set(claimed.map((d) => d.id)), new Set([aIds[0], aIds[1], bIds[0], cIds[0]]), "each organization's oldest before any organization's third")
    })

    await t.test('a failing destination: nothing before its probe is due, then one probe at a time', async (t) => {
      await emptied(db)
      const down = tenant()
      await deliveries(db, down, 'https://down.example.com/hooks', 5)
      const failures = Array.from({ length: 3 }, (_, i) => ({
        workspaceId: down.workspaceId,
        organizationId: down.organizationId,
        destination: 'https://down.example.com',
        attempt: { ok: false, at: new Date(now.getTime() - 10_000 + i), error: 'HTTP 503', probe: false },
      }))
      const policy = { failuresBeforeFailing: 3, probeSchedule: [5, 60] }
      const changes = await recordDestinationHealth(db, failures, policy, now)
      t.match(changes, [{ destination: 'https://down.example.com', from: 'healthy', health: { state: 'failing' } }], 'the third failure in a row makes it failing')
      t.same(await claim(db, { now: new Date(now.getTime() - 6_000) }), [], 'its probe is not due yet: none of its deliveries goes')
      const [probe, ...more] = await claim(db)
      t.ok(probe?.probe, 'once due, one delivery goes, as its probe')
      t.equal(more.length, 0, 'and only one')
      t.same(await claim(db), [], 'no second probe while the first is in flight')

      // The probe's own next attempt is an hour off, along its retry schedule.
      await recordAttempts(db, [{ delivery: probe!, attempt: { attemptedAt: now, statusCode: 503, error: null, durationMs: 3, responseBody: '', responseTruncated: false }, outcome: { status: 'failed', nextAttemptAt: new Date(now.getTime() + 3_600_000) } }])
      await recordDestinationHealth(db, [{ ...failures[0]!, attempt: { ok: false, at: now, error: 'HTTP 503', probe: true } }], policy, now)
      t.same(await claim(db), [], 'a failed probe: the next one waits for its delay')
      const [listed] = (await listDestinations(db, { workspaceId: down.workspaceId, page: 0, size: 10 })).content
      t.match(listed, { destination: 'https://down.example.com', state: 'failing', consecutiveFailures: 4, lastError: 'HTTP 503', heldDeliveries: 5 })
      t.equal(listed?.nextProbeAt, new Date(now.getTime() + 60_000).toISOString(), 'the next probe after the second delay')

      const later = new Date(now.getTime() + 61_000)
      const [second] = await claim(db, { now: later })
      t.ok(second?.probe, 'the second probe goes once due')
      const restored = await recordDestinationHealth(db, [{ ...failures[0]!, attempt: { ok: true, at: later, error: null, probe: true } }], policy, later)
      t.match(restored, [{ from: 'failing', health: { state: 'healthy', consecutiveFailures: 0 } }], 'a 2xx restores it')
      const released = await claim(db, { now: later })
      t.equal(released.length, 4, 'and its other deliveries go at once, within its room')
      t.ok(released.some((d) => d.id === probe!.id), 'the failed probe among them, its retry brought forward')
    })

    await t.test('the probe of a failing destination never holds another destination back', async (t) => {
      await emptied(db)
      const down = tenant()
      const up = tenant()
      await deliveries(db, down, 'https://down.example.com/hooks', 20)
      await deliveries(db, up, 'https://up.example.com/hooks', 2)
      await recordDestinationHealth(
        db,
        [{ workspaceId: down.workspaceId, organizationId: down.organizationId, destination: 'https://down.example.com', attempt: { ok: false, at: now, error: 'HTTP 500', probe: false } }],
        { failuresBeforeFailing: 1, probeSchedule: [3600] },
        now,
      )
      t.same(origins(await claim(db)), ['https://up.example.com', 'https://up.example.com'])
    })

    await t.test('leases are stamped on the database clock, whatever the dispatcher believes the time is', async (t) => {
      await emptied(db)
      await deliveries(db, tenant(), 'https://skewed.example.com/h', 1)
      const skewedAhead = new Date(Date.now() + 3_600_000)
      const [claimed] = await claim(db, { now: skewedAhead, leaseMs: 60_000 })
      t.ok(claimed, 'claimed by a dispatcher whose clock is an hour ahead')
      const row = await db.selectFrom('webhook_deliveries').select('lease_until').where('id', '=', claimed!.id).executeTakeFirstOrThrow()
      const leaseUntil = new Date(row.lease_until!).getTime()
      t.ok(leaseUntil < Date.now() + 120_000, 'its lease runs a minute from the database’s now, not from the skewed clock')
      t.same(await claim(db, { now: skewedAhead }), [], 'and another dispatcher with the same skew does not take it over')
    })
  })
}
