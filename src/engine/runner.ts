import type { Kysely } from 'kysely'
import type { CommandContext, ReadModels } from '../commands/context.js'
import { applySessionKanban } from '../commands/session-cards.js'
import type { EventStore } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Database } from '../store/database.js'
import { FlowVersions } from './flow-versions.js'
import { runTurn } from './interpreter.js'
import { ExpirySweeper } from './sweeper.js'
import { EngineWorker } from './worker.js'

/** The engine role: the worker that runs turns and the sweeper that expires idle sessions. */
export class ConversationRunner {
  readonly worker: EngineWorker
  readonly sweeper: ExpirySweeper

  constructor(deps: { db: Kysely<Database>; store: EventStore; readModels: ReadModels; logger: Logger; now?: () => Date; sweepIntervalMs?: number }) {
    const ctx = (actor: string): CommandContext => ({
      store: deps.store,
      readModels: deps.readModels,
      logger: deps.logger,
      now: deps.now ?? (() => new Date()),
      metadata: { actor },
    })
    const kanbanCtx = ctx('engine')
    this.worker = new EngineWorker(deps.db, deps.store, new FlowVersions(deps.store), runTurn, (turn, actions) => applySessionKanban(kanbanCtx, turn, actions), deps.logger, kanbanCtx.now)
    this.sweeper = new ExpirySweeper(deps.db, ctx('expiry-sweeper'), deps.logger, deps.sweepIntervalMs)
  }

  async start(): Promise<void> {
    await this.worker.start()
    this.sweeper.start()
  }

  async stop(): Promise<void> {
    await this.sweeper.stop()
    await this.worker.stop()
  }
}
