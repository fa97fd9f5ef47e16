import type { Kysely } from 'kysely'
import type { WakeUp } from '../eventstore/wake-up.js'
import type { Logger } from '../logger.js'
import type { ProjectionRuntime } from '../projections/runtime.js'
import type { Database } from '../store/database.js'
import { createDeliveryAgent, type Resolver } from './agent.js'
import { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js'
import { webhookOutboxProjection } from './outbox.js'

export interface DispatcherRoleSettings extends DispatcherOptions {
  /** Extra CA trusted by the delivery agent only (WEBHOOK_CA_FILE). */
  caFile?: string | undefined
  /** Replaces DNS for the agent (tests); answers are checked like real ones. */
  lookup?: Resolver | undefined
  /**
   * Checkpoint moves announced by other processes (Postgres): when another process applies the
   * outbox projection, its batches wake the dispatcher instead of the next poll.
   */
  checkpointsMoved?: WakeUp | undefined
}

/** The dispatcher role: its agent, its dispatcher, woken whenever the outbox projection writes. */
export class DispatcherRole {
  readonly dispatcher: WebhookDispatcher
  private readonly agent
  private readonly checkpointsMoved: WakeUp | undefined
  private unsubscribe: (() => void) | undefined
  private following?: { controller: AbortController; loop: Promise<void> }

  private readonly readModels: ProjectionRuntime

  constructor(
    db: Kysely<Database>,
    readModels: ProjectionRuntime,
    settings: DispatcherRoleSettings,
    logger: Logger,
  ) {
    this.readModels = readModels
    this.agent = createDeliveryAgent({ allowedPrivateCidrs: settings.allowedPrivateCidrs, caFile: settings.caFile, lookup: settings.lookup })
    this.dispatcher = new WebhookDispatcher(db, this.agent, settings, logger)
    this.checkpointsMoved = settings.checkpointsMoved
  }

  start(): void {
    this.unsubscribe ??= this.readModels.onApplied((projection) => {
      if (projection === webhookOutboxProjection.name) this.dispatcher.wake()
    })
    this.dispatcher.start()
    if (this.checkpointsMoved && !this.following) {
      const controller = new AbortController()
      this.following = { controller, loop: this.followOtherProcesses(this.checkpointsMoved, controller.signal) }
    }
  }

  private async followOtherProcesses(checkpointsMoved: WakeUp, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const woken = await checkpointsMoved.wait(60_000, signal, checkpointsMoved.wakeUpCount)
      // Batches applied here already woke it through onApplied.
      if (woken && !this.readModels.appliesHere(webhookOutboxProjection.name)) this.dispatcher.wake()
    }
  }

  async stop(): Promise<void> {
    this.unsubscribe?.()
    this.unsubscribe = undefined
    this.following?.controller.abort()
    await this.following?.loop
    this.following = undefined
    await this.dispatcher.stop()
  }

  /** Stops and releases the agent's connections; the delivery cannot start again. */
  async close(): Promise<void> {
    await this.stop()
    await this.agent.close()
  }
}
