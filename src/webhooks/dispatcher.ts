import type { Kysely } from 'kysely'
import type { Agent } from 'undici'
import type { Logger } from '../logger.js'
import type { Database } from '../store/database.js'
import { WriteBatches } from '../store/write-batches.js'
import { BlockedAddressError, CONNECT_TIMEOUT_MS, WEBHOOK_TIMEOUT_MS, postWebhook } from './agent.js'
import { callbackUrlProblem, parseCidrs, type ParsedCidr } from './callback-url.js'
import { claimDueDeliveries, recordAttempts, renewClaims, type AttemptOutcome, type AttemptRecord, type ClaimedDelivery, type MadeAttempt } from './deliveries.js'
import { DEFAULT_FAILURES_BEFORE_FAILING, DEFAULT_MAX_IN_FLIGHT_PER_DESTINATION, DEFAULT_PROBE_SCHEDULE } from '../config.js'
import type { HealthPolicy } from './destination-health.js'
import { recordDestinationHealth, type DestinationChange } from './destinations.js'
import { honoursRetryAfter, nextRetryDelay, parseRetryAfter } from './retry.js'
import { webhookHeaders } from './signature.js'

export interface AttemptCounter {
  countWebhookAttempt(outcome: AttemptOutcome['status'], attempt: { statusCode: number | null; error: string | null }): void
  countDestinationChange(state: DestinationChange['health']['state']): void
}

export interface DispatcherOptions {
  /** Delay before each attempt of a round, in seconds (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[]
  /** The same private ranges the agent was built with: the URL is checked before the agent is asked. */
  allowedPrivateCidrs: readonly string[]
  /** Deliveries in flight at once, across sessions. */
  concurrency?: number
  /** How long an attempt may take, connection to the last byte of the answer (WEBHOOK_TIMEOUT_MS; shorter in tests). */
  responseTimeoutMs?: number
  /** Deliveries in flight at once to one destination (a callback URL's origin within a workspace). */
  perDestination?: number
  /** When a destination becomes failing, and how often a failing one is probed. */
  health?: Partial<HealthPolicy>
  /** How often to look for due deliveries when nothing woke the dispatcher. */
  pollIntervalMs?: number
  /**
   * How long a claim outlives a dispatcher that stopped renewing it: claims of attempts in flight
   * are renewed every quarter of it, so a dead dispatcher's sessions wait this long at most.
   */
  leaseMs?: number
  now?: () => Date
  /** Counts attempts by outcome (the service's metrics). */
  metrics?: AttemptCounter | undefined
}

/** Why an attempt failed, in words an integrator can act on; never a stack. */
function describeFailure(error: unknown, responseTimeoutMs: number): string {
  if (error instanceof BlockedAddressError) return `blocked: ${error.message}`
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timeout: no complete response within ${responseTimeoutMs / 1000} s`
    if ((error as NodeJS.ErrnoException).code === 'UND_ERR_CONNECT_TIMEOUT') return `timeout: no connection within ${CONNECT_TIMEOUT_MS / 1000} s`
    const code = (error as NodeJS.ErrnoException).code
    return code ? `${code}: ${error.message}` : error.message
  }
  return String(error)
}

/** An attempt made, with the claim it was made under. */
type Attempted = MadeAttempt & { delivery: ClaimedDelivery }

const destinationKey = (delivery: ClaimedDelivery): string => `${delivery.workspaceId} ${delivery.destination}`

/**
 * Sends the outbox: claims due deliveries (each the oldest open one of its session), POSTs them
 * through the SSRF-checking agent with Standard Webhooks signatures, and records every attempt.
 * A 2xx is delivered; anything else is retried along the schedule, then dead.
 *
 * Fair between tenants: each destination has at most `perDestination` attempts in flight here,
 * claims go round the organizations and destinations, and a destination that keeps failing holds
 * its deliveries behind one probe at a time (src/webhooks/destination-health.ts) until a 2xx
 * restores it, so a receiver that hangs or refuses costs its own tenant, nobody else.
 */
export class WebhookDispatcher {
  private readonly concurrency: number
  private readonly perDestination: number
  private readonly responseTimeoutMs: number
  private readonly health: HealthPolicy
  /** Attempts in flight here, by destination. */
  private readonly inFlightTo = new Map<string, { workspaceId: string; destination: string; attempts: number }>()
  private readonly pollIntervalMs: number
  private readonly leaseMs: number
  private readonly now: () => Date
  private readonly allowed: ParsedCidr[]
  private readonly inFlight = new Set<Promise<void>>()
  /** The claims of the attempts in flight, renewed until each is recorded. */
  private readonly claimsInFlight = new Map<string, ClaimedDelivery>()
  private renewal: NodeJS.Timeout | undefined
  private renewing = false
  /** Attempts finishing together are recorded in one statement: one commit each, not one per attempt. */
  private readonly made: WriteBatches<Attempted>
  private controller?: AbortController
  private loop?: Promise<void>
  private woken = false
  private wakeSleeper: (() => void) | undefined

  private readonly db: Kysely<Database>
  private readonly agent: Agent
  private readonly options: DispatcherOptions
  private readonly logger: Logger

  constructor(
    db: Kysely<Database>,
    agent: Agent,
    options: DispatcherOptions,
    logger: Logger,
  ) {
    this.db = db
    this.agent = agent
    this.options = options
    this.logger = logger
    this.concurrency = options.concurrency ?? 128
    this.responseTimeoutMs = options.responseTimeoutMs ?? WEBHOOK_TIMEOUT_MS
    this.perDestination = Math.min(options.perDestination ?? DEFAULT_MAX_IN_FLIGHT_PER_DESTINATION, this.concurrency)
    this.health = { failuresBeforeFailing: DEFAULT_FAILURES_BEFORE_FAILING, probeSchedule: DEFAULT_PROBE_SCHEDULE, ...options.health }
    this.pollIntervalMs = options.pollIntervalMs ?? 500
    this.leaseMs = options.leaseMs ?? 2_000
    this.now = options.now ?? (() => new Date())
    this.allowed = parseCidrs(options.allowedPrivateCidrs)
    // Health first: whoever sees a probe's delivery delivered finds its destination restored.
    this.made = new WriteBatches(async (made) => {
      await this.recordHealth(made)
      await recordAttempts(db, made)
    })
  }

  /**
   * Carries the attempts over to their destinations' health: every failure, and the successes
   * that have news (a probe, or a destination that had failed since its last success). A health
   * not recorded only delays a state change to the next attempt: the attempts themselves are.
   */
  private async recordHealth(made: readonly Attempted[]): Promise<void> {
    const news = made.filter(({ delivery, outcome }) => outcome.status !== 'delivered' || delivery.probe || delivery.destinationFailing)
    if (news.length === 0) return
    let changes: DestinationChange[]
    try {
      changes = await recordDestinationHealth(
        this.db,
        news.map(({ delivery, attempt, outcome }) => ({
          workspaceId: delivery.workspaceId,
          organizationId: delivery.organizationId,
          destination: delivery.destination,
          attempt: { ok: outcome.status === 'delivered', at: attempt.attemptedAt, error: attempt.error ?? `HTTP ${attempt.statusCode}`, probe: delivery.probe },
        })),
        this.health,
        this.now(),
      )
    } catch (error) {
      this.logger.warn({ err: error }, 'recording webhook destination health failed')
      return
    }
    for (const change of changes) {
      this.options.metrics?.countDestinationChange(change.health.state)
      const about = { workspaceId: change.workspaceId, organizationId: change.organizationId, destination: change.destination, lastError: change.health.lastError }
      if (change.health.state === 'failing') {
        this.logger.warn({ ...about, consecutiveFailures: change.health.consecutiveFailures, nextProbeAt: change.health.nextProbeAt }, 'webhook destination is failing: its deliveries wait behind one probe at a time')
      } else {
        this.logger.warn(about, 'webhook destination restored: its held deliveries go out in order')
        this.wake()
      }
    }
  }

  start(): void {
    if (this.controller) return
    this.controller = new AbortController()
    this.loop = this.run(this.controller.signal)
    this.renewal = setInterval(() => void this.renewHeldClaims(), this.leaseMs / 4)
    this.renewal.unref()
  }

  private async renewHeldClaims(): Promise<void> {
    if (this.renewing || this.claimsInFlight.size === 0) return
    this.renewing = true
    try {
      await renewClaims(this.db, [...this.claimsInFlight.values()], this.leaseMs)
    } catch (error) {
      // The claims may run out and be attempted again elsewhere, with the same webhook-id.
      this.logger.warn({ err: error }, 'renewing webhook claims failed')
    } finally {
      this.renewing = false
    }
  }

  /** New deliveries may be due: look now instead of at the next poll. */
  wake(): void {
    this.woken = true
    this.wakeSleeper?.()
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const room = this.concurrency - this.inFlight.size
      let claimed: ClaimedDelivery[] = []
      if (room > 0) {
        try {
          claimed = await claimDueDeliveries(this.db, {
            now: this.now(),
            limit: room,
            leaseMs: this.leaseMs,
            firstDelaySeconds: this.options.retrySchedule[0] ?? 0,
            perDestination: this.perDestination,
            inFlight: [...this.inFlightTo.values()],
            // A probe's claim on its destination outlives the attempt, so a dispatcher dying mid-probe frees it soon after.
            probeHoldMs: this.responseTimeoutMs + this.leaseMs,
          })
        } catch (error) {
          this.logger.error({ err: error }, 'claiming webhook deliveries failed; retrying')
        }
      }
      for (const delivery of claimed) {
        this.claimsInFlight.set(delivery.id, delivery)
        this.countInFlight(delivery, 1)
        const attempt: Promise<void> = this.attempt(delivery).finally(() => {
          this.claimsInFlight.delete(delivery.id)
          this.countInFlight(delivery, -1)
          this.inFlight.delete(attempt)
          this.wake()
        })
        this.inFlight.add(attempt)
      }
      // A full claim may have left more due; otherwise wait for news or the next poll.
      if (room > 0 && claimed.length === room) continue
      await this.sleep(signal)
    }
    await Promise.allSettled([...this.inFlight])
  }

  private countInFlight(delivery: ClaimedDelivery, change: 1 | -1): void {
    const key = destinationKey(delivery)
    const entry = this.inFlightTo.get(key) ?? { workspaceId: delivery.workspaceId, destination: delivery.destination, attempts: 0 }
    entry.attempts += change
    if (entry.attempts > 0) this.inFlightTo.set(key, entry)
    else this.inFlightTo.delete(key)
  }

  private sleep(signal: AbortSignal): Promise<void> {
    if (this.woken) {
      this.woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wakeSleeper = undefined
        this.woken = false
        resolve()
      }
      const timer = setTimeout(done, this.pollIntervalMs)
      signal.addEventListener('abort', done, { once: true })
      this.wakeSleeper = done
    })
  }

  /** One attempt of one delivery, recorded whatever happens. */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const attemptedAt = this.now()
    const started = performance.now()
    let record: AttemptRecord
    let retryAfter: number | undefined
    try {
      const problem = callbackUrlProblem(delivery.callbackUrl, this.allowed)
      if (problem) throw new Error(`blocked: ${problem}`)
      const timestamp = Math.floor(attemptedAt.getTime() / 1000)
      const response = await postWebhook(this.agent, delivery.callbackUrl, delivery.body, webhookHeaders(delivery.signingSecret, delivery.id, timestamp, delivery.body), { timeoutMs: this.responseTimeoutMs })
      record = { attemptedAt, statusCode: response.status, error: null, durationMs: response.durationMs, responseBody: response.body, responseTruncated: response.truncated }
      if (honoursRetryAfter(response.status)) retryAfter = parseRetryAfter(response.retryAfter, attemptedAt)
    } catch (error) {
      record = { attemptedAt, statusCode: null, error: describeFailure(error, this.responseTimeoutMs), durationMs: Math.round(performance.now() - started), responseBody: null, responseTruncated: false }
    }
    const outcome = this.outcomeOf(delivery, record, retryAfter)
    this.options.metrics?.countWebhookAttempt(outcome.status, record)
    try {
      await this.made.add({ delivery, attempt: record, outcome })
    } catch (error) {
      // The lease runs out and the delivery is attempted again, with the same webhook-id.
      this.logger.error({ err: error, deliveryId: delivery.id }, 'recording a webhook attempt failed')
    }
    if (outcome.status !== 'delivered') {
      this.logger.warn({ deliveryId: delivery.id, sessionId: delivery.sessionId, destination: delivery.destination, statusCode: record.statusCode, error: record.error, outcome: outcome.status }, 'webhook attempt failed')
    }
  }

  private outcomeOf(delivery: ClaimedDelivery, record: AttemptRecord, retryAfter: number | undefined): AttemptOutcome {
    if (record.statusCode !== null && record.statusCode >= 200 && record.statusCode < 300) return { status: 'delivered' }
    const delay = nextRetryDelay(this.options.retrySchedule, delivery.roundAttempts + 1, retryAfter)
    if (delay === undefined) return { status: 'dead' }
    return { status: 'failed', nextAttemptAt: new Date(record.attemptedAt.getTime() + delay * 1000) }
  }

  async stop(): Promise<void> {
    this.controller?.abort()
    this.wakeSleeper?.()
    await this.loop
    clearInterval(this.renewal)
    this.controller = undefined
  }
}
