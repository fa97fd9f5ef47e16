import { sql, type RawBuilder } from 'kysely'
import { v4 as uuidV4, v5 as uuidV5 } from 'uuid'
import { ConflictError, NotFoundError } from '../errors.js'
import { listPage, sqlDirection, type ListPage, type Paging } from '../projections/paging.js'
import { toIso } from '../projections/timestamps.js'
import { inOneSnapshot, type DbOrTrx } from '../store/database.js'
import type { DeliveryStatus } from '../store/tables/webhook-deliveries.js'
import { prepared } from '../store/prepared.js'
import { probeDestinationNow, type DestinationKey } from './destinations.js'

// Every statement on `webhook_deliveries` is here: the outbox makes deliveries (in its batches'
// statements), the dispatcher claims and records them, the API and the metrics read them; those
// about a destination's held deliveries are in destinations.ts.

// A delivery's id (its `webhook-id`) is derived from the event it reports, so a replay of the
// same event finds the row already there.
const DELIVERY_ID_NAMESPACE = 'b8e0f3d6-3f57-4f55-9d0e-5f4a53c1a7e2'
export const deliveryIdOf = (eventId: string): string => uuidV5(eventId, DELIVERY_ID_NAMESPACE)

/** A webhook waiting to be written with the others of its batch. */
export interface NewDelivery {
  id: string
  session_id: string
  message_id: string
  body: string
  event_ids: string[]
  source_commit: string
  source_prepare: string
  created_at: string
}

/**
 * A delivery's destination: its callback URL's origin, in lower case (with the workspace, the unit
 * of fairness and of health). Computed where the URL is, in the statements that write deliveries.
 */
const destinationOf = (callbackUrl: RawBuilder<string | null>) => sql<string | null>`lower(substring(${callbackUrl} from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'))`

/**
 * Makes deliveries on their sessions' stored routes `r`, where `onlyIf` holds; one made already (a
 * replay) stays as it is. `byIndex`: the routes are also named by `= any`, an index lookup in any
 * plan, for the live batch's prepared statement (see {@link attemptsRecord}); a bulk write, planned
 * each time, joins faster without it.
 */
export const insertDeliveries = (deliveries: readonly NewDelivery[], onlyIf: RawBuilder<boolean>, byIndex = false) => sql`
  insert into webhook_deliveries (id, organization_id, workspace_id, session_id, message_id, api_key_id, callback_url, destination,
    body, event_ids, source_commit, source_prepare, status, created_at)
  select v.id, r.organization_id, r.workspace_id, r.session_id, v.message_id, r.api_key_id, r.callback_url, ${destinationOf(sql`r.callback_url`)},
    v.body, v.event_ids, v.source_commit, v.source_prepare, case when r.callback_url is null then 'skipped' else 'pending' end, v.created_at
  from jsonb_to_recordset(cast(${JSON.stringify(deliveries)} as jsonb))
    as v(id uuid, session_id uuid, message_id uuid, body text, event_ids jsonb, source_commit bigint, source_prepare bigint, created_at timestamptz)
  join webhook_sessions r on r.session_id = v.session_id
  where ${byIndex ? sql`r.session_id = any(${[...new Set(deliveries.map((delivery) => delivery.session_id))]}::uuid[]) and` : sql``} ${onlyIf}
  order by v.source_commit, v.source_prepare
  on conflict (id) do nothing`

/** A delivery the dispatcher holds the lease of, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string
  sessionId: string
  workspaceId: string
  organizationId: string
  /** The callback URL's origin: see {@link destinationOf}. */
  destination: string
  callbackUrl: string
  body: string
  signingSecret: string
  /** Attempts made in this round, before the one about to start. */
  roundAttempts: number
  leaseToken: string
  /** The one attempt its failing destination lets through: its outcome decides whether the destination is restored. */
  probe: boolean
  /** Whether its destination had failed since its last success when it was claimed: a 2xx then has news for its health. */
  destinationFailing: boolean
}

/** Attempts this dispatcher has in flight to one destination. */
export interface DestinationInFlight {
  workspaceId: string
  destination: string
  attempts: number
}

export interface ClaimOptions {
  /** Due times are read on this clock (the retry schedule's); leases on the database's. */
  now: Date
  limit: number
  leaseMs: number
  firstDelaySeconds: number
  /** Attempts one destination may have in flight here at once. */
  perDestination?: number
  /** This dispatcher's attempts in flight, by destination. */
  inFlight?: readonly DestinationInFlight[]
  /** How long a probe holds its failing destination: past it, a dispatcher that died while probing is forgotten. */
  probeHoldMs?: number
}

/**
 * Takes the lease of up to `limit` deliveries that are due and are each the oldest open delivery
 * of their session, so a session's webhooks go out one at a time and in order while different
 * sessions proceed side by side. Fair between tenants: no destination gets more than its room
 * (`perDestination` less what this dispatcher has in flight to it), a failing destination only
 * its one probe when it is due, and the claim goes round the organizations and destinations, each
 * one's oldest first, rather than down one queue. `skip locked` lets several dispatchers share the
 * work; the lease (not a held transaction) covers the HTTP call, renewed while it runs
 * ({@link renewClaims}), and a crashed dispatcher's lease runs out within one lease. Leases are
 * stamped and read on the database's clock, so dispatchers on hosts whose clocks differ agree on
 * when one runs out.
 */
export async function claimDueDeliveries(db: DbOrTrx, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const claimed: ClaimedDelivery[] = []
  const inFlight = new Map((options.inFlight ?? []).map((f) => [`${f.workspaceId} ${f.destination}`, { ...f }]))
  // A round looks at the oldest due deliveries only: when they were all of a few destinations, the
  // next round, with those destinations full, looks past them.
  for (let round = 0; round < CLAIM_ROUNDS && claimed.length < options.limit; round++) {
    const { deliveries, lookedPastWindow } = await claimRound(db, { ...options, limit: options.limit - claimed.length, inFlight: [...inFlight.values()] })
    claimed.push(...deliveries)
    if (!lookedPastWindow) break
    for (const delivery of deliveries) {
      const key = `${delivery.workspaceId} ${delivery.destination}`
      const entry = inFlight.get(key) ?? { workspaceId: delivery.workspaceId, destination: delivery.destination, attempts: 0 }
      entry.attempts += 1
      inFlight.set(key, entry)
    }
  }
  return claimed
}

/** Rounds of one claim at most: each one claims or fills up the destinations it looked at. */
const CLAIM_ROUNDS = 8

async function claimRound(db: DbOrTrx, options: ClaimOptions): Promise<{ deliveries: ClaimedDelivery[]; lookedPastWindow: boolean }> {
  const token = uuidV4()
  const perDestination = options.perDestination ?? options.limit
  const inFlight = options.inFlight ?? []
  // The candidates looked at in one round: the oldest due deliveries, of destinations with room.
  const window = Math.max(options.limit * 4, 64)
  const claim = sql<{
    id: string
    session_id: string
    workspace_id: string
    organization_id: string
    destination: string
    callback_url: string
    body: string
    round_attempts: number
    signing_secret: string | null
    probe: boolean
    destination_failing: boolean
    looked_at: string | number
  }>`
    with here as (
      select * from unnest(${inFlight.map((f) => f.workspaceId)}::uuid[], ${inFlight.map((f) => f.destination)}::text[], ${inFlight.map((f) => f.attempts)}::integer[])
        as h(workspace_id, destination, attempts)
    ),
    closed as (
      select workspace_id, destination from here where attempts >= ${perDestination}
      union all
      select workspace_id, destination from webhook_destinations
      where state = 'failing' and (next_probe_at > ${options.now}::timestamptz or probe_until > statement_timestamp())
    ),
    due as (
      select d.id, d.organization_id, d.workspace_id, d.destination, d.source_commit, d.source_prepare
      from webhook_deliveries d
      where d.status in ('pending', 'failed')
        and coalesce(d.next_attempt_at, d.created_at + make_interval(secs => ${options.firstDelaySeconds}::double precision)) <= ${options.now}::timestamptz
        and (d.lease_until is null or d.lease_until <= statement_timestamp())
        and not exists (select 1 from closed c where c.workspace_id = d.workspace_id and c.destination = d.destination)
        and not exists (
          select 1 from webhook_deliveries e
          where e.session_id = d.session_id and e.status in ('pending', 'failed')
            and (e.source_commit, e.source_prepare) < (d.source_commit, d.source_prepare))
      order by d.source_commit, d.source_prepare
      limit ${window}
    ),
    ranked as (
      select due.id, due.source_commit, due.source_prepare,
        row_number() over (partition by due.workspace_id, due.destination order by due.source_commit, due.source_prepare) as nth_of_destination,
        row_number() over (partition by due.organization_id order by due.source_commit, due.source_prepare) as nth_of_organization,
        case when w.state = 'failing' then 1 else ${perDestination} - coalesce(h.attempts, 0) end as room
      from due
      left join webhook_destinations w on w.workspace_id = due.workspace_id and w.destination = due.destination
      left join here h on h.workspace_id = due.workspace_id and h.destination = due.destination
    ),
    picked as (
      select id from ranked where nth_of_destination <= room
      order by nth_of_organization, nth_of_destination, source_commit, source_prepare
      limit ${options.limit}
    ),
    locked as (
      select d.id from webhook_deliveries d
      where d.id = any(array(select id from picked)) and d.status in ('pending', 'failed')
        and (d.lease_until is null or d.lease_until <= statement_timestamp())
      for update skip locked
    ),
    claimed as (
      update webhook_deliveries w set lease_token = ${token}, lease_until = statement_timestamp() + make_interval(secs => ${options.leaseMs / 1000}::double precision)
      from locked
      where w.id = locked.id
      returning w.id, w.session_id, w.workspace_id, w.organization_id, w.destination, w.callback_url, w.body, w.round_attempts, w.api_key_id
    ),
    probing as (
      update webhook_destinations p set probe_until = statement_timestamp() + make_interval(secs => ${(options.probeHoldMs ?? 30_000) / 1000}::double precision)
      from claimed c
      where p.workspace_id = c.workspace_id and p.destination = c.destination and p.state = 'failing'
      returning p.workspace_id, p.destination
    )
    select c.id, c.session_id, c.workspace_id, c.organization_id, c.destination, c.callback_url, c.body, c.round_attempts,
      (select k.signing_secret from api_keys k where k.id = c.api_key_id) as signing_secret,
      exists (select 1 from probing p where p.workspace_id = c.workspace_id and p.destination = c.destination) as probe,
      coalesce((select w.consecutive_failures > 0 or w.state = 'failing' from webhook_destinations w
        where w.workspace_id = c.workspace_id and w.destination = c.destination), false) as destination_failing,
      null as looked_at
    from claimed c
    union all
    select null, null, null, null, null, null, null, null, null, null, null, (select count(*) from due)`.compile(db)
  const { rows: all } = await db.executeQuery(prepared(claim))
  const rows = all.filter((row) => row.id !== null)
  const lookedAt = Number(all.find((row) => row.id === null)?.looked_at ?? 0)
  const deliveries = rows.map((row) => ({
    id: row.id,
    sessionId: row.session_id,
    workspaceId: row.workspace_id,
    organizationId: row.organization_id,
    destination: row.destination ?? '',
    callbackUrl: row.callback_url,
    body: row.body,
    // A key always has a secret; an empty one makes the attempt fail visibly rather than unsigned.
    signingSecret: row.signing_secret ?? '',
    roundAttempts: Number(row.round_attempts),
    leaseToken: token,
    probe: row.probe,
    destinationFailing: row.destination_failing,
  }))
  return { deliveries, lookedPastWindow: lookedAt >= window }
}

/**
 * Extends claims still held by `leaseMs` from now on the database's clock: a dispatcher renews the
 * claims of its attempts in flight, so a claim outlives a dispatcher that died by one short lease
 * at most. A claim recorded since (its token cleared) or taken over by another dispatcher (another
 * token) is left alone.
 */
export async function renewClaims(db: DbOrTrx, claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], leaseMs: number): Promise<void> {
  if (claims.length === 0) return
  const renew = sql`
    update webhook_deliveries w set lease_until = statement_timestamp() + make_interval(secs => ${leaseMs / 1000}::double precision)
    from unnest(${claims.map((c) => c.id)}::uuid[], ${claims.map((c) => c.leaseToken)}::uuid[]) as c(id, lease_token)
    where w.id = any(${claims.map((c) => c.id)}::uuid[]) and w.id = c.id and w.lease_token = c.lease_token`.compile(db)
  await db.executeQuery(prepared(renew))
}

export interface AttemptRecord {
  attemptedAt: Date
  statusCode: number | null
  error: string | null
  durationMs: number
  responseBody: string | null
  responseTruncated: boolean
}

export type AttemptOutcome = { status: 'delivered' } | { status: 'failed'; nextAttemptAt: Date } | { status: 'dead' }

/** An attempt made, with the delivery it was made for and where it leaves that delivery. */
export interface MadeAttempt {
  delivery: Pick<ClaimedDelivery, 'id' | 'leaseToken'>
  attempt: AttemptRecord
  outcome: AttemptOutcome
}

/**
 * Stores attempts and where each leaves its delivery, in one statement (so one commit for many
 * attempts). Every attempt is recorded and counted, because it happened: two dispatchers may both
 * attempt a delivery whose lease ran out. Its number follows the delivery's count, read and moved
 * under the delivery row's lock, so recorders of the same delivery wait for each other rather than
 * pick the same number; they lock in id order, so none holds a row another waits for while it
 * waits itself. A delivery's state only changes if the attempt's dispatcher still holds the lease.
 */
export async function recordAttempts(db: DbOrTrx, made: readonly MadeAttempt[]): Promise<void> {
  if (made.length === 0) return
  await db.executeQuery(prepared(attemptsRecord(made).compile(db)))
}

/** The statement of {@link recordAttempts}. */
export function attemptsRecord(made: readonly MadeAttempt[]): RawBuilder<unknown> {
  const rows = made.map(({ delivery, attempt, outcome }, seq) => ({
    seq,
    delivery_id: delivery.id,
    lease_token: delivery.leaseToken,
    attempted_at: attempt.attemptedAt.toISOString(),
    status_code: attempt.statusCode,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    response_body: attempt.responseBody,
    response_truncated: attempt.responseTruncated,
    status: outcome.status,
    next_attempt_at: outcome.status === 'failed' ? outcome.nextAttemptAt.toISOString() : null,
    delivered_at: outcome.status === 'delivered' ? attempt.attemptedAt.toISOString() : null,
    last_error: attempt.error ?? (outcome.status === 'delivered' ? null : `HTTP ${attempt.statusCode}`),
  }))
  // The rows are found by `= any(ids)`, an index lookup in any plan: a join on the recordset let the
  // cached generic plan, made while the table was small, walk the whole table to find them.
  const ids = [...new Set(made.map(({ delivery }) => delivery.id))]
  return sql`
    with made as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as m(
        seq integer, delivery_id uuid, lease_token uuid, attempted_at timestamptz, status_code integer,
        error text, duration_ms integer, response_body text, response_truncated boolean,
        status text, next_attempt_at timestamptz, delivered_at timestamptz, last_error text)
    ),
    held as materialized (
      select d.id, d.attempt_count, d.lease_token from webhook_deliveries d
      where d.id = any(${ids}::uuid[])
      order by d.id
      for no key update
    ),
    numbered as (
      select m.*, h.attempt_count + row_number() over (partition by m.delivery_id order by m.seq) as attempt,
        m.lease_token = h.lease_token as under_lease
      from made m join held h on h.id = m.delivery_id
    ),
    recorded as (
      insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms, response_body, response_truncated)
      select delivery_id, attempt, attempted_at, status_code, error, duration_ms, response_body, response_truncated
      from numbered
    ),
    per_delivery as (
      select delivery_id, count(*)::integer as attempts, max(seq) filter (where under_lease) as leased_seq
      from numbered group by delivery_id
    )
    update webhook_deliveries w set
      attempt_count = w.attempt_count + p.attempts,
      status = coalesce(l.status, w.status),
      round_attempts = w.round_attempts + (l.seq is not null)::integer,
      next_attempt_at = case when l.seq is null then w.next_attempt_at else l.next_attempt_at end,
      delivered_at = case when l.seq is null then w.delivered_at else l.delivered_at end,
      last_error = case when l.seq is null then w.last_error else l.last_error end,
      lease_token = case when l.seq is null then w.lease_token end,
      lease_until = case when l.seq is null then w.lease_until end
    from per_delivery p left join made l on l.seq = p.leased_seq
    where w.id = p.delivery_id and w.id = any(${ids}::uuid[])`
}

export interface DeliveryAttemptView {
  attempt: number
  attemptedAt: string
  statusCode: number | null
  error: string | null
  durationMs: number
  responseTruncated: boolean
  /** Only in the detail of one delivery. */
  responseBody?: string | null
}

export interface DeliveryView {
  id: string
  sessionId: string
  messageId: string
  status: DeliveryStatus
  callbackUrl: string | null
  eventIds: string[]
  body: unknown
  attemptCount: number
  nextAttemptAt: string | null
  /** Open, and its destination is failing: it waits behind the destination's probe, whatever its next attempt says. */
  heldByDestination: boolean
  lastError: string | null
  deliveredAt: string | null
  createdAt: string
  attempts: DeliveryAttemptView[]
}

/**
 * Whose deliveries: an API key's workspace, or `null` for the operator (the CLI), who stands above
 * organizations and may narrow the list with `organizationId`.
 */
export type DeliveryScope = string | null

export interface DeliveryQuery extends Paging {
  workspaceId: DeliveryScope
  organizationId?: string
  sessionId?: string
  status?: DeliveryStatus
  direction: 'ASC' | 'DESC'
}

const deliveryColumns = [
  'id', 'session_id', 'message_id', 'status', 'callback_url', 'event_ids', 'body', 'attempt_count',
  'next_attempt_at', 'last_error', 'delivered_at', 'created_at', 'workspace_id', 'destination',
] as const

async function withAttempts(db: DbOrTrx, rows: DeliveryRow[], withBodies: boolean): Promise<DeliveryView[]> {
  const ids = rows.map((row) => row.id)
  const open = rows.filter((row) => row.status === 'pending' || row.status === 'failed')
  const [attempts, failing] = await Promise.all([
    ids.length ? db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', ids).orderBy('delivery_id').orderBy('attempt').execute() : [],
    open.length
      ? db.selectFrom('webhook_destinations').select(['workspace_id', 'destination']).where('state', '=', 'failing').where('workspace_id', 'in', [...new Set(open.map((row) => row.workspace_id))]).execute()
      : [],
  ])
  const failingKeys = new Set(failing.map((row) => `${row.workspace_id} ${row.destination}`))
  return rows.map((row) => ({
    id: row.id,
    sessionId: row.session_id,
    messageId: row.message_id,
    status: row.status,
    callbackUrl: row.callback_url,
    eventIds: row.event_ids,
    body: JSON.parse(row.body) as unknown,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at === null ? null : toIso(row.next_attempt_at),
    heldByDestination: (row.status === 'pending' || row.status === 'failed') && failingKeys.has(`${row.workspace_id} ${row.destination}`),
    lastError: row.last_error,
    deliveredAt: row.delivered_at === null ? null : toIso(row.delivered_at),
    createdAt: toIso(row.created_at),
    attempts: attempts
      .filter((a) => a.delivery_id === row.id)
      .map((a) => ({
        attempt: a.attempt,
        attemptedAt: toIso(a.attempted_at),
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
        responseTruncated: a.response_truncated,
        ...(withBodies ? { responseBody: a.response_body } : {}),
      })),
  }))
}

type DeliveryRow = {
  id: string
  workspace_id: string
  destination: string | null
  session_id: string
  message_id: string
  status: DeliveryStatus
  callback_url: string | null
  event_ids: string[]
  body: string
  attempt_count: number
  next_attempt_at: Date | null
  last_error: string | null
  delivered_at: Date | null
  created_at: Date
}

/** A workspace's deliveries in the order their turns happened; response bodies are left out. */
export async function listDeliveries(db: DbOrTrx, query: DeliveryQuery): Promise<ListPage<DeliveryView>> {
  let matching = db.selectFrom('webhook_deliveries')
  if (query.workspaceId !== null) matching = matching.where('workspace_id', '=', query.workspaceId)
  if (query.organizationId) matching = matching.where('organization_id', '=', query.organizationId)
  if (query.sessionId) matching = matching.where('session_id', '=', query.sessionId)
  if (query.status) matching = matching.where('status', '=', query.status)
  const direction = sqlDirection(query.direction)
  const ordered = matching.select(deliveryColumns).orderBy('source_commit', direction).orderBy('source_prepare', direction)
  // A page's attempts are read together, for all its rows at once.
  const page = await listPage({ matching, ordered }, query, (row) => row)
  return { ...page, content: await withAttempts(db, page.content, false) }
}

export async function findDelivery(db: DbOrTrx, workspaceId: DeliveryScope, id: string): Promise<DeliveryView | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(deliveryColumns)
    .$if(workspaceId !== null, (q) => q.where('workspace_id', '=', workspaceId!))
    .where('id', '=', id)
    .executeTakeFirst()
  return row ? (await withAttempts(db, [row], true))[0] : undefined
}

/**
 * Queues a dead or delivered delivery again, due at once, with a fresh retry schedule and the same
 * `webhook-id`; a failed one waiting for its next attempt (and not being sent) has that attempt
 * brought forward to now, its schedule kept. Returns the delivery's status after (and, requeued,
 * its destination), or undefined when there is none.
 */
export async function requeueDelivery(
  db: DbOrTrx,
  workspaceId: DeliveryScope,
  id: string,
  now: Date,
): Promise<{ requeued: true; status: DeliveryStatus; destination: DestinationKey | undefined } | { requeued: false; status: DeliveryStatus } | undefined> {
  const destinationKey = (row: { workspace_id: string; destination: string | null }) => (row.destination === null ? undefined : { workspaceId: row.workspace_id, destination: row.destination })
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', round_attempts: 0, next_attempt_at: now, lease_token: null, lease_until: null, destination: destinationOf(sql.ref('callback_url')) })
    .$if(workspaceId !== null, (q) => q.where('workspace_id', '=', workspaceId!))
    .where('id', '=', id)
    .where('status', 'in', ['dead', 'delivered'])
    .returning(['workspace_id', 'destination'])
    .executeTakeFirst()
  if (updated) return { requeued: true, status: 'pending', destination: destinationKey(updated) }
  const due = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now })
    .$if(workspaceId !== null, (q) => q.where('workspace_id', '=', workspaceId!))
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', sql<Date>`statement_timestamp()`)]))
    .returning(['workspace_id', 'destination'])
    .executeTakeFirst()
  if (due) return { requeued: true, status: 'failed', destination: destinationKey(due) }
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('status')
    .$if(workspaceId !== null, (q) => q.where('workspace_id', '=', workspaceId!))
    .where('id', '=', id)
    .executeTakeFirst()
  return row ? { requeued: false, status: row.status } : undefined
}

/**
 * The retry of the API and of `flowd deliveries retry`: requeues a dead or delivered delivery, or
 * brings a failed one's next attempt forward, and returns it; 404 when there is none in scope, 409
 * when its state refuses a retry (pending or being sent: already on its way; skipped). A retry to
 * a failing destination also lets its next probe go at once: someone is asking to try it again.
 */
export async function retryDelivery(db: DbOrTrx, workspaceId: DeliveryScope, id: string, now: Date): Promise<DeliveryView> {
  const result = await requeueDelivery(db, workspaceId, id, now)
  if (!result) throw new NotFoundError(`delivery ${id} not found`)
  if (!result.requeued) {
    throw new ConflictError(
      result.status === 'skipped'
        ? `delivery ${id} has no callback URL to send to`
        : `delivery ${id} is ${result.status}: it is still queued and will be attempted on its schedule`,
    )
  }
  if (result.destination) await probeDestinationNow(db, result.destination, now)
  return (await findDelivery(db, workspaceId, id))!
}

export interface DeliveryLink {
  id: string
  status: DeliveryStatus
}

/** The webhook deliveries of a session, by the id of each event they report (the outbox records it). */
export async function deliveriesByEvent(db: DbOrTrx, sessionId: string): Promise<Map<string, DeliveryLink>> {
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'event_ids']).where('session_id', '=', sessionId).execute()
  const links = new Map<string, DeliveryLink>()
  for (const row of rows) for (const eventId of row.event_ids) links.set(eventId, { id: row.id, status: row.status })
  return links
}

/** Deliveries not yet settled: the dispatcher still has work for them. */
const OPEN_DELIVERY_STATUSES = ['pending', 'failed'] as const

/** Deliveries by status, open and dead (the delivered ones are not counted). */
export async function countUnsettledDeliveries(db: DbOrTrx): Promise<{ pending: number; failed: number; dead: number }> {
  // Two queries, so each uses its partial index (open deliveries; dead ones), on one snapshot, so a
  // delivery that dies between them is not counted both open and dead.
  const [open, dead] = await inOneSnapshot(db, (trx) =>
    Promise.all([
      trx.selectFrom('webhook_deliveries').select(['status', (eb) => eb.fn.countAll<string>().as('count')]).where('status', 'in', OPEN_DELIVERY_STATUSES).groupBy('status').execute(),
      trx.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('count')).where('status', '=', 'dead').executeTakeFirstOrThrow(),
    ]),
  )
  const counts = { pending: 0, failed: 0, dead: Number(dead.count) }
  for (const row of open) counts[row.status as 'pending' | 'failed'] = Number(row.count)
  return counts
}

/** When the oldest open delivery was made; undefined when none is open. */
export async function oldestOpenDeliveryAt(db: DbOrTrx): Promise<Date | undefined> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.min('created_at').as('oldest')).where('status', 'in', OPEN_DELIVERY_STATUSES).executeTakeFirst()
  return row?.oldest ? new Date(row.oldest) : undefined
}
