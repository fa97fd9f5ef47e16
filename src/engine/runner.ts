import type { Kysely } from 'kysely'
import type { CommandContext, ReadModels } from '../commands/context.js'
import { applySessionKanban } from '../commands/session-cards.js'
import type { EventStore } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import type { Database } from '../store/database.js'
import { whileLeased, type Leases } from '../store/lease.js'
import { FlowVersions } from './flow-versions.js'
import { runTurn } from './interpreter.js'
import { ExpirySweeper } from './sweeper.js'
import { EngineWorker } from './worker.js'

/** The engine's lease: one engine runs at a time (the `engine` checkpoint is one position for every session). */
export const ENGINE_LEASE = 'engine'

/**
 * The engine role: the worker that runs turns and the sweeper that expires idle sessions. With
 * leases (Postgres), one process at a time runs them, holding the `engine` lease; the others
 * stand by and take over when it goes.
 */
export class ConversationRunner {
  readonly worker: EngineWorker
  readonly sweeper: ExpirySweeper
  private readonly leases: Leases | undefined
  private readonly logger: Logger
  private controller?: AbortController
  private loop?: Promise<void>

  constructor(deps: { db: Kysely<Database>; store: EventStore; readModels: ReadModels; logger: Logger; now?: () => Date; sweepIntervalMs?: number; metrics?: Metrics; leases?: Leases }) {
    this.leases = deps.leases
    this.logger = deps.logger
    const ctx = (actor: string): CommandContext => ({
      store: deps.store,
      readModels: deps.readModels,
      logger: deps.logger,
      now: deps.now ?? (() => new Date()),
      metadata: { actor },
    })
    const kanbanCtx = ctx('engine')
    this.worker = new EngineWorker(deps.db, deps.store, new FlowVersions(deps.store), runTurn, (turn, actions) => applySessionKanban(kanbanCtx, turn, actions), deps.logger, kanbanCtx.now, deps.metrics)
    this.sweeper = new ExpirySweeper(deps.db, ctx('expiry-sweeper'), deps.logger, deps.sweepIntervalMs)
  }

  async start(): Promise<void> {
    if (!this.leases) {
      await this.worker.start()
      this.sweeper.start()
      return
    }
    if (this.controller) return
    this.controller = new AbortController()
    this.loop = whileLeased(this.leases, ENGINE_LEASE, this.controller.signal, (leased) => this.runWhile(leased), this.logger)
  }

  /** Runs the worker and the sweeper until `signal` aborts (the lease is lost, or stop). */
  private async runWhile(signal: AbortSignal): Promise<void> {
    await this.worker.start()
    this.sweeper.start()
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
    await this.sweeper.stop()
    await this.worker.stop()
  }

  async stop(): Promise<void> {
    this.controller?.abort()
    await this.loop
    this.controller = undefined
    this.loop = undefined
    await this.sweeper.stop()
    await this.worker.stop()
  }
}
