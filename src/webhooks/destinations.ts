import { sql } from 'kysely'
import { listPage, type ListPage, type Paging } from '../projections/paging.js'
import { toIso } from '../projections/timestamps.js'
import type { DbOrTrx } from '../store/database.js'
import type { DestinationState } from '../store/tables/webhook-destinations.js'
import { HEALTHY, afterAttempts, type DestinationAttempt, type DestinationHealth, type HealthPolicy } from './destination-health.js'

// Every statement on `webhook_destinations`: the dispatchers record each destination's health
// after their attempts; the API, the CLI and the metrics read it. Beside them, the two on
// `webhook_deliveries` that are about a destination: the deliveries it holds, counted, and released.

/** A destination: a callback URL's origin within one workspace. */
export interface DestinationKey {
  workspaceId: string
  destination: string
}

export interface DestinationAttemptMade extends DestinationKey {
  organizationId: string
  attempt: DestinationAttempt
}

/** A destination whose state an attempt changed. */
export interface DestinationChange extends DestinationKey {
  organizationId: string
  from: DestinationState
  health: DestinationHealth
}

const keyOf = (key: DestinationKey): string => `${key.workspaceId} ${key.destination}`

/**
 * Applies attempts, in the order they were made, to the health of their destinations, and returns
 * the destinations whose state changed (failing, or restored). Destinations are locked in key
 * order, so dispatchers recording at once wait for each other instead of deadlocking.
 */
export async function recordDestinationHealth(db: DbOrTrx, made: readonly DestinationAttemptMade[], policy: HealthPolicy, now: Date): Promise<DestinationChange[]> {
  if (made.length === 0) return []
  const byDestination = new Map<string, DestinationAttemptMade[]>()
  for (const one of made) byDestination.set(keyOf(one), [...(byDestination.get(keyOf(one)) ?? []), one])
  const keys = [...byDestination.values()].map(([first]) => first!).sort((a, b) => keyOf(a).localeCompare(keyOf(b)))
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ workspace_id: string; destination: string; state: DestinationState; consecutive_failures: number; failing_since: Date | null; last_error: string | null; last_failure_at: Date | null; probes: number; next_probe_at: Date | null; probe_until: Date | null }>`
      select d.workspace_id, d.destination, d.state, d.consecutive_failures, d.failing_since, d.last_error, d.last_failure_at, d.probes, d.next_probe_at, d.probe_until
      from webhook_destinations d
      join unnest(${keys.map((k) => k.workspaceId)}::uuid[], ${keys.map((k) => k.destination)}::text[]) as k(workspace_id, destination)
        on d.workspace_id = k.workspace_id and d.destination = k.destination
      order by d.workspace_id, d.destination
      for update of d`.execute(trx)
    const stored = new Map(rows.map((row) => [keyOf({ workspaceId: row.workspace_id, destination: row.destination }), row]))
    const changes: DestinationChange[] = []
    const written = keys.map((key) => {
      const row = stored.get(keyOf(key))
      const before: DestinationHealth = row
        ? {
            state: row.state,
            consecutiveFailures: Number(row.consecutive_failures),
            failingSince: row.failing_since && new Date(row.failing_since),
            lastError: row.last_error,
            lastFailureAt: row.last_failure_at && new Date(row.last_failure_at),
            probes: Number(row.probes),
            nextProbeAt: row.next_probe_at && new Date(row.next_probe_at),
          }
        : HEALTHY
      const attempts = byDestination.get(keyOf(key))!
      const health = afterAttempts(before, attempts.map((one) => one.attempt), policy)
      if (health.state !== before.state) changes.push({ ...key, organizationId: key.organizationId, from: before.state, health })
      return {
        workspace_id: key.workspaceId,
        destination: key.destination,
        organization_id: key.organizationId,
        state: health.state,
        consecutive_failures: health.consecutiveFailures,
        failing_since: health.failingSince?.toISOString() ?? null,
        // A restored destination keeps its last error on record: it says what the outage was.
        last_error: health.lastError ?? before.lastError,
        last_failure_at: (health.lastFailureAt ?? before.lastFailureAt)?.toISOString() ?? null,
        probes: health.probes,
        next_probe_at: health.nextProbeAt?.toISOString() ?? null,
        // A probe recorded frees its destination for the next one.
        probe_until: health.state === 'healthy' || attempts.some((one) => one.attempt.probe) ? null : (row?.probe_until && new Date(row.probe_until).toISOString()) ?? null,
      }
    })
    await sql`
      insert into webhook_destinations (workspace_id, destination, organization_id, state, consecutive_failures, failing_since,
        last_error, last_failure_at, probes, next_probe_at, probe_until, updated_at)
      select v.workspace_id, v.destination, v.organization_id, v.state, v.consecutive_failures, v.failing_since,
        v.last_error, v.last_failure_at, v.probes, v.next_probe_at, v.probe_until, ${now.toISOString()}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(written)}::jsonb) as v(workspace_id uuid, destination text, organization_id uuid, state text,
        consecutive_failures integer, failing_since timestamptz, last_error text, last_failure_at timestamptz, probes integer,
        next_probe_at timestamptz, probe_until timestamptz)
      on conflict (workspace_id, destination) do update set
        state = excluded.state, consecutive_failures = excluded.consecutive_failures, failing_since = excluded.failing_since,
        last_error = excluded.last_error, last_failure_at = excluded.last_failure_at, probes = excluded.probes,
        next_probe_at = excluded.next_probe_at, probe_until = excluded.probe_until, updated_at = excluded.updated_at`.execute(trx)
    const restored = changes.filter((change) => change.health.state === 'healthy')
    if (restored.length > 0) await releaseHeld(trx, restored, now)
    return changes
  })
}

/**
 * Brings forward the retries of the deliveries that failed while their destination was down (the
 * probes among them): restored, it gets everything it held at once, in order per session, each
 * delivery keeping its place in its retry schedule.
 */
async function releaseHeld(trx: DbOrTrx, destinations: readonly DestinationKey[], now: Date): Promise<void> {
  await sql`
    update webhook_deliveries d set next_attempt_at = ${now.toISOString()}::timestamptz
    from unnest(${destinations.map((k) => k.workspaceId)}::uuid[], ${destinations.map((k) => k.destination)}::text[]) as k(workspace_id, destination)
    where d.workspace_id = k.workspace_id and d.destination = k.destination and d.status = 'failed' and d.next_attempt_at > ${now.toISOString()}::timestamptz`.execute(trx)
}

/**
 * Lets the next probe of a failing destination go now: an operator's retry of one of its
 * deliveries is a request to try the destination again.
 */
export async function probeDestinationNow(db: DbOrTrx, key: DestinationKey, now: Date): Promise<void> {
  await db
    .updateTable('webhook_destinations')
    .set({ next_probe_at: now })
    .where('workspace_id', '=', key.workspaceId)
    .where('destination', '=', key.destination)
    .where('state', '=', 'failing')
    .execute()
}

export interface DestinationView {
  workspaceId: string
  destination: string
  state: DestinationState
  failingSince: string | null
  consecutiveFailures: number
  lastError: string | null
  lastFailureAt: string | null
  nextProbeAt: string | null
  /** Open deliveries to it: the ones a failing destination holds. */
  heldDeliveries: number
  updatedAt: string
}

/**
 * The destinations of a workspace (or, for the operator, every one, optionally of an organization)
 * that ever failed: failing ones first, each with the deliveries it holds.
 */
export async function listDestinations(
  db: DbOrTrx,
  query: Paging & { workspaceId: string | null; organizationId?: string; state?: DestinationState },
): Promise<ListPage<DestinationView>> {
  let matching = db.selectFrom('webhook_destinations as w')
  if (query.workspaceId !== null) matching = matching.where('w.workspace_id', '=', query.workspaceId)
  if (query.organizationId) matching = matching.where('w.organization_id', '=', query.organizationId)
  if (query.state) matching = matching.where('w.state', '=', query.state)
  const ordered = matching
    .selectAll('w')
    .select((eb) =>
      eb
        .selectFrom('webhook_deliveries as d')
        .select((c) => c.fn.countAll<string>().as('held'))
        .whereRef('d.workspace_id', '=', 'w.workspace_id')
        .whereRef('d.destination', '=', 'w.destination')
        .where('d.status', 'in', ['pending', 'failed'])
        .as('held'),
    )
    .orderBy(sql`w.state = 'failing'`, 'desc')
    .orderBy('w.failing_since')
    .orderBy('w.destination')
    .orderBy('w.workspace_id')
  return listPage({ matching, ordered }, query, (row) => ({
    workspaceId: row.workspace_id,
    destination: row.destination,
    state: row.state,
    failingSince: row.failing_since === null ? null : toIso(row.failing_since),
    consecutiveFailures: row.consecutive_failures,
    lastError: row.last_error,
    lastFailureAt: row.last_failure_at === null ? null : toIso(row.last_failure_at),
    nextProbeAt: row.state === 'failing' && row.next_probe_at !== null ? toIso(row.next_probe_at) : null,
    heldDeliveries: Number(row.held ?? 0),
    updatedAt: toIso(row.updated_at),
  }))
}

/** Failing destinations, and the deliveries they hold, across every workspace (the metrics). */
export async function countFailingDestinations(db: DbOrTrx): Promise<{ destinations: number; held: number }> {
  const { rows } = await sql<{ destinations: string | number; held: string | number }>`
    select count(*) as destinations, coalesce(sum((select count(*) from webhook_deliveries d
      where d.workspace_id = w.workspace_id and d.destination = w.destination and d.status in ('pending', 'failed'))), 0) as held
    from webhook_destinations w where w.state = 'failing'`.execute(db)
  return { destinations: Number(rows[0]?.destinations ?? 0), held: Number(rows[0]?.held ?? 0) }
}
