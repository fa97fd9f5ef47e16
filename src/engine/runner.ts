import type { Kysely } from 'kysely'
import type { CommandContext, ReadModels } from '../commands/context.js'
import { applySessionKanban } from '../commands/session-cards.js'
import { DEFAULT_ENGINE_PARTITIONS } from '../config.js'
import type { EventStore } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import type { Database } from '../store/database.js'
import { whileLeased, type Leases } from '../store/lease.js'
import { FlowVersions } from './flow-versions.js'
import { runTurnOrCall } from './interpreter.js'
import { PartitionLeases, SWEEPER_LEASE, checkPartitionCount, everyPartition } from './partitions.js'
import { ExpirySweeper } from './sweeper.js'
import { ReplayRunner } from './replays.js'
import { EngineWorker } from './worker.js'
import { OutsideCalls, type OutsideCallSettings } from './outside-calls.js'
import { createDeliveryAgent, type DeliveryAgentOptions } from '../webhooks/agent.js'
import type { Agent } from 'undici'

/**
 * The engine role: the worker that runs turns, the sweeper that expires idle sessions and the
 * runner of replays against drafts. With leases (Postgres), engine processes share the partitions
 * of the sessions (src/engine/partitions.ts) and one of them holds the sweeper's lease, and runs
 * the replays with it; without (the embedded database, one process), this process does it all.
 */
export class ConversationRunner {
  readonly worker: EngineWorker
  readonly sweeper: ExpirySweeper
  readonly replays: ReplayRunner
  readonly calls: OutsideCalls | undefined
  private readonly agent: Agent | undefined
  private readonly db: Kysely<Database>
  private readonly leases: Leases | undefined
  private readonly partitions: number
  private readonly logger: Logger
  private readonly metrics: Metrics | undefined
  private controller?: AbortController
  private loop?: Promise<unknown>

  constructor(deps: {
    db: Kysely<Database>
    store: EventStore
    readModels: ReadModels
    logger: Logger
    now?: () => Date
    sweepIntervalMs?: number
    metrics?: Metrics
    leases?: Leases
    partitions?: number
    /** Makes the calls flows ask for, through an SSRF-checking agent of its own; without it, a turn that reaches a call fails. */
    calls?: DeliveryAgentOptions & Omit<OutsideCallSettings, 'agent'>
  }) {
    this.db = deps.db
    this.leases = deps.leases
    this.partitions = deps.partitions ?? DEFAULT_ENGINE_PARTITIONS
    this.logger = deps.logger
    this.metrics = deps.metrics
    const ctx = (actor: string): CommandContext => ({
      store: deps.store,
      readModels: deps.readModels,
      logger: deps.logger,
      now: deps.now ?? (() => new Date()),
      metadata: { actor },
    })
    const kanbanCtx = ctx('engine')
    this.agent = deps.calls && createDeliveryAgent(deps.calls)
    this.calls = deps.calls && this.agent && new OutsideCalls(deps.db, ctx('engine'), { ...deps.calls, agent: this.agent }, deps.logger)
    const flows = new FlowVersions(deps.store)
    this.worker = new EngineWorker(deps.db, deps.store, flows, runTurnOrCall, (turn, actions) => applySessionKanban(kanbanCtx, turn, actions), deps.logger, kanbanCtx.now, deps.metrics, undefined, this.calls)
    this.sweeper = new ExpirySweeper(deps.db, ctx('expiry-sweeper'), deps.logger, deps.sweepIntervalMs)
    this.replays = new ReplayRunner(deps.db, ctx('replays'), flows, deps.logger)
  }

  /**
   * Starts driving sessions; refuses (PartitionCountMismatchError) when the database's checkpoints
   * were made for another partition count, the first engine to start recording its own.
   */
  async start(): Promise<void> {
    await checkPartitionCount(this.db, this.partitions)
    if (!this.leases) {
      await this.drive(everyPartition(this.partitions))
      this.sweeper.start()
      this.replays.start()
      return
    }
    if (this.controller) return
    this.controller = new AbortController()
    const { signal } = this.controller
    const partitions = new PartitionLeases(this.leases, this.partitions, (held) => this.drive(held), this.logger)
    this.loop = Promise.all([partitions.run(signal), whileLeased(this.leases, SWEEPER_LEASE, signal, (leased) => this.sweepWhile(leased), this.logger)])
  }

  /**
   * Drives the sessions of `held` from here on: the worker stops at a batch boundary, its checkpoints
   * saved, and goes on with them. The count is checked again under the partitions' leases: a
   * repartition may have been made since the start.
   */
  private async drive(held: number[]): Promise<void> {
    await this.worker.stop()
    if (held.length > 0) {
      await checkPartitionCount(this.db, this.partitions)
      await this.worker.start({ count: this.partitions, held })
    }
    this.metrics?.enginePartitionsHeld.set(held.length)
    this.logger.info({ partitions: held }, 'engine partitions held')
  }

  /** Runs the sweeper and the replays until `signal` aborts (the lease is lost, or stop): one engine process at a time does. */
  private async sweepWhile(signal: AbortSignal): Promise<void> {
    this.sweeper.start()
    this.replays.start()
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
    await Promise.all([this.sweeper.stop(), this.replays.stop()])
  }

  async stop(): Promise<void> {
    this.controller?.abort()
    await this.loop
    this.controller = undefined
    this.loop = undefined
    await this.sweeper.stop()
    await this.replays.stop()
    await this.worker.stop()
    await this.calls?.settled()
    await this.agent?.close()
  }
}
