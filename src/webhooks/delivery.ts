import type { Kysely } from 'kysely'
import type { Logger } from '../logger.js'
import type { ProjectionRuntime } from '../projections/runtime.js'
import type { Database } from '../store/database.js'
import { createDeliveryAgent, type Resolver } from './agent.js'
import { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js'
import { webhookOutboxProjection } from './outbox.js'

export interface WebhookDeliverySettings extends DispatcherOptions {
  /** Extra CA trusted by the delivery agent only (WEBHOOK_CA_FILE). */
  caFile?: string | undefined
  /** Replaces DNS for the agent (tests); answers are checked like real ones. */
  lookup?: Resolver | undefined
}

/** The dispatcher role: its agent, its dispatcher, woken whenever the outbox projection writes. */
export class WebhookDelivery {
  readonly dispatcher: WebhookDispatcher
  private readonly agent
  private unsubscribe: (() => void) | undefined

  constructor(
    db: Kysely<Database>,
    private readonly readModels: ProjectionRuntime,
    settings: WebhookDeliverySettings,
    logger: Logger,
  ) {
    this.agent = createDeliveryAgent({ allowedPrivateCidrs: settings.allowedPrivateCidrs, caFile: settings.caFile, lookup: settings.lookup })
    this.dispatcher = new WebhookDispatcher(db, this.agent, settings, logger)
  }

  start(): void {
    this.unsubscribe ??= this.readModels.onApplied((projection) => {
      if (projection === webhookOutboxProjection.name) this.dispatcher.wake()
    })
    this.dispatcher.start()
  }

  async stop(): Promise<void> {
    this.unsubscribe?.()
    this.unsubscribe = undefined
    await this.dispatcher.stop()
  }

  /** Stops and releases the agent's connections; the delivery cannot start again. */
  async close(): Promise<void> {
    await this.stop()
    await this.agent.close()
  }
}
