import type { Kysely } from 'kysely'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Logger } from '../logger.js'
import type { Database } from '../store/database.js'

/** At most this many pending events are read per projection and scrape: the lag in events is counted up to here. */
export const PROJECTION_LAG_SCAN_LIMIT = 500

export type WebhookAttemptOutcome = 'delivered' | 'failed' | 'dead'
export type OttExchangeResult = 'exchanged' | 'rejected' | 'error'

/** How far a read model is behind the event store. */
export interface ProjectionLag {
  name: string
  /** Events of its streams it has still to apply, counted up to the bound asked for. */
  eventsBehind: number
  /** When the oldest of them was written; undefined when it is caught up. */
  oldestPendingAt: Date | undefined
}

/** What a scrape reads of the webhook deliveries (`src/webhooks/deliveries.ts` holds every statement on them). */
export interface DeliveryReadings {
  countUnsettledDeliveries(db: Kysely<Database>): Promise<Record<string, number>>
  oldestOpenDeliveryAt(db: Kysely<Database>): Promise<Date | undefined>
  countFailingDestinations(db: Kysely<Database>): Promise<{ destinations: number; held: number }>
}

export interface ProjectionLagSource {
  lag(maxEvents: number): Promise<ProjectionLag[]>
}

/** What an attempt came to, from its HTTP status class or the kind of failure `describeFailure` wrote. */
function attemptResult(attempt: { statusCode: number | null; error: string | null }): string {
  if (attempt.statusCode !== null) return `${Math.floor(attempt.statusCode / 100)}xx`
  if (attempt.error?.startsWith('blocked:')) return 'blocked'
  if (attempt.error?.startsWith('timeout:')) return 'timeout'
  return 'network'
}

/**
 * The service's Prometheus metrics, in a registry of their own (never prom-client's global one),
 * so several apps in one process, as in tests, do not collide. One per process; it is handed to
 * whatever it measures. Gauges that need the database are read when scraped, not kept up to date.
 */
export class Metrics {
  readonly registry = new Registry()

  readonly httpRequestDuration = new Histogram({
    name: 'flowd_http_request_duration_seconds',
    help: 'HTTP requests by route pattern (unmatched: no route), method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  })

  readonly eventStoreSubscriptionErrors = new Counter({
    name: 'flowd_eventstore_subscription_errors_total',
    help: 'EventStoreDB subscriptions of this process that failed, by kind: permanent (access denied, bad credentials, not the leader) or transient',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  })

  readonly eventsAppended = new Counter({
    name: 'flowd_events_appended_total',
    help: 'Events appended to the event store by this process, by event type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  })

  readonly engineTurnDuration = new Histogram({
    name: 'flowd_engine_turn_duration_seconds',
    help: 'Engine turns (interpreter run and TurnCompleted append) by outcome: completed, calling (it waits for a call outside), conflict (another worker came first), error',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  })

  readonly modelCalls = new Counter({
    name: 'flowd_model_calls_total',
    help: "Model calls AI steps made in the turns this process completed (preview sessions' included)",
    registers: [this.registry],
  })

  readonly modelTokens = new Counter({
    name: 'flowd_model_tokens_total',
    help: 'Tokens the model calls of AI steps took, as the endpoints counted them, by kind (prompt, completion)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  })

  readonly webhookAttempts = new Counter({
    name: 'flowd_webhook_attempts_total',
    help: 'Webhook delivery attempts by the state they left the delivery in (delivered, failed: retried later, dead) and their result (2xx…5xx, timeout, network, blocked)',
    labelNames: ['outcome', 'result'] as const,
    registers: [this.registry],
  })

  readonly webhookDestinationChanges = new Counter({
    name: 'flowd_webhook_destination_changes_total',
    help: 'Webhook destinations (callback origins within a workspace) that this process saw become failing, or restored (healthy)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  })

  readonly ottExchanges = new Counter({
    name: 'flowd_ott_exchanges_total',
    help: 'One-time token exchanges (POST /auth/exchange) by result: exchanged, rejected (unknown, used or expired token), error',
    labelNames: ['result'] as const,
    registers: [this.registry],
  })

  readonly streamsParked = new Counter({
    name: 'flowd_streams_parked_total',
    help: 'Streams this process parked after repeated failures on one of their events, by processor (engine, a read model, webhook-outbox)',
    labelNames: ['processor'] as const,
    registers: [this.registry],
  })

  readonly sessionsRetryingConflicts = new Gauge({
    name: 'flowd_engine_sessions_retrying_conflicts',
    help: 'Sessions whose turn keeps losing its append to other writers, parked and tried again with backoff by the engine of this process now',
    registers: [this.registry],
  })

  readonly sessionStreamsOpen = new Gauge({
    name: 'flowd_session_streams_open',
    help: 'Session streams (GET /v1/sessions/{id}/stream) this process holds open now',
    registers: [this.registry],
  })

  readonly enginePartitionsHeld = new Gauge({
    name: 'flowd_engine_partitions_held',
    help: 'Partitions of the sessions (of ENGINE_PARTITIONS) whose turns this process runs now',
    registers: [this.registry],
  })

  private projections: ProjectionLagSource | undefined
  private outbox: Kysely<Database> | undefined
  private deliveries: DeliveryReadings | undefined
  private lagScrape: Promise<ProjectionLag[]> | undefined

  private readonly logger: Logger

  constructor(
    logger: Logger,
    options: { processMetrics?: boolean } = {},
  ) {
    this.logger = logger
    // Memory, CPU, event loop lag, GC, handles: prom-client's standard names (process_*, nodejs_*).
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry })
    const metrics = this
    new Gauge({
      name: 'flowd_projection_lag_events',
      help: `Events of its streams a read model has still to apply, counted up to ${PROJECTION_LAG_SCAN_LIMIT}`,
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        this.reset()
        for (const lag of await metrics.projectionLag()) this.set({ projection: lag.name }, lag.eventsBehind)
      },
    })
    new Gauge({
      name: 'flowd_projection_lag_seconds',
      help: 'Age of the oldest event a read model has still to apply; 0 when caught up',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        this.reset()
        const now = Date.now()
        for (const lag of await metrics.projectionLag()) this.set({ projection: lag.name }, lag.oldestPendingAt ? Math.max(0, (now - lag.oldestPendingAt.getTime()) / 1000) : 0)
      },
    })
    new Gauge({
      name: 'flowd_webhook_deliveries',
      help: 'Webhook deliveries by status: pending (not attempted yet), failed (waiting for a retry), dead (retries used up)',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset()
        for (const [status, count] of Object.entries(await metrics.deliveryCounts())) this.set({ status }, count)
      },
    })
    new Gauge({
      name: 'flowd_parked_streams',
      help: 'Streams parked now, waiting for `flowd processors retry`, by processor',
      labelNames: ['processor'] as const,
      registers: [this.registry],
      async collect() {
        this.reset()
        for (const [processor, count] of Object.entries(await metrics.parkedCounts())) this.set({ processor }, count)
      },
    })
    new Gauge({
      name: 'flowd_webhook_destinations_failing',
      help: 'Webhook destinations failing now (their deliveries wait behind one probe at a time), and the open deliveries they hold',
      labelNames: ['count'] as const,
      registers: [this.registry],
      async collect() {
        this.reset()
        const failing = await metrics.failingDestinations()
        if (failing) {
          this.set({ count: 'destinations' }, failing.destinations)
          this.set({ count: 'held_deliveries' }, failing.held)
        }
      },
    })
    new Gauge({
      name: 'flowd_webhook_oldest_open_delivery_seconds',
      help: 'Age of the oldest pending or failed webhook delivery; 0 when there is none',
      registers: [this.registry],
      async collect() {
        this.reset()
        const oldest = await metrics.oldestOpenDelivery()
        if (oldest !== null) this.set(oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest.getTime()) / 1000))
      },
    })
  }

  /** Read models whose lag is reported on each scrape. */
  watchProjections(source: ProjectionLagSource): void {
    this.projections = source
  }

  /** The database holding the webhook outbox and the parked streams, counted on each scrape. */
  watchOutbox(db: Kysely<Database>, deliveries: DeliveryReadings): void {
    this.outbox = db
    this.deliveries = deliveries
  }

  countWebhookAttempt(outcome: WebhookAttemptOutcome, attempt: { statusCode: number | null; error: string | null }): void {
    this.webhookAttempts.inc({ outcome, result: attemptResult(attempt) })
  }

  countDestinationChange(state: 'healthy' | 'failing'): void {
    this.webhookDestinationChanges.inc({ state })
  }

  /** The exposition, in the registry's content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }

  /** Both lag gauges are collected at once per scrape: they share one reading. */
  private projectionLag(): Promise<ProjectionLag[]> {
    const source = this.projections
    if (!source) return Promise.resolve([])
    this.lagScrape ??= source
      .lag(PROJECTION_LAG_SCAN_LIMIT)
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'reading projection lag for metrics failed')
        return []
      })
      .finally(() => {
        this.lagScrape = undefined
      })
    return this.lagScrape
  }

  private async deliveryCounts(): Promise<Record<string, number>> {
    const db = this.outbox
    if (!db) return {}
    try {
      return await this.deliveries!.countUnsettledDeliveries(db)
    } catch (error) {
      this.logger.warn({ err: error }, 'counting webhook deliveries for metrics failed')
      return {}
    }
  }

  private async parkedCounts(): Promise<Record<string, number>> {
    const db = this.outbox
    if (!db) return {}
    try {
      const rows = await db.selectFrom('parked_streams').select(['processor', (eb) => eb.fn.countAll<string>().as('count')]).groupBy('processor').execute()
      return Object.fromEntries(rows.map((row) => [row.processor, Number(row.count)]))
    } catch (error) {
      this.logger.warn({ err: error }, 'counting parked streams for metrics failed')
      return {}
    }
  }

  /** undefined: unknown (no outbox, or the query failed). */
  private async failingDestinations(): Promise<{ destinations: number; held: number } | undefined> {
    const db = this.outbox
    if (!db) return undefined
    try {
      return await this.deliveries!.countFailingDestinations(db)
    } catch (error) {
      this.logger.warn({ err: error }, 'counting failing webhook destinations for metrics failed')
      return undefined
    }
  }

  /** undefined: no open delivery; null: unknown (no outbox, or the query failed). */
  private async oldestOpenDelivery(): Promise<Date | undefined | null> {
    const db = this.outbox
    if (!db) return null
    try {
      return await this.deliveries!.oldestOpenDeliveryAt(db)
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the oldest webhook delivery for metrics failed')
      return null
    }
  }
}
