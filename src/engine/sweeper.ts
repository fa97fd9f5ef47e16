import { expireSession } from '../commands/sessions.js'
import type { CommandContext } from '../commands/context.js'
import type { Logger } from '../logger.js'
import { findExpiredSessions } from '../projections/session-logs.js'
import type { DbOrTrx } from '../store/database.js'

/** Ends running sessions whose inactivity timeout has passed (`SessionExpired`; the log shows `timeout`). */
export class ExpirySweeper {
  private timer?: NodeJS.Timeout
  private running?: Promise<void>

  private readonly db: DbOrTrx
  private readonly ctx: CommandContext
  private readonly logger: Logger
  private readonly intervalMs: number

  constructor(
    db: DbOrTrx,
    ctx: CommandContext,
    logger: Logger,
    intervalMs = 5000,
  ) {
    this.db = db
    this.ctx = ctx
    this.logger = logger
    this.intervalMs = intervalMs
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sweep()
        .then(() => {})
        .catch((error: unknown) => this.logger.error({ err: error }, 'expiry sweep failed'))
        .finally(() => (this.running = undefined))
    }, this.intervalMs)
  }

  /** Expires overdue sessions, a bounded batch per call (the log catches up before the next); returns how many. */
  async sweep(): Promise<number> {
    let expired = 0
    for (const sessionId of await findExpiredSessions(this.db, this.ctx.now(), 500)) {
      if (await expireSession(this.ctx, sessionId)) expired++
    }
    return expired
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }
}
