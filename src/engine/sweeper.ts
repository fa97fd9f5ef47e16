import pLimit from 'p-limit'
import { expireSession, fireTimer } from '../commands/sessions.js'
import { dropTimer, dueTimers } from './timers.js'
import type { CommandContext } from '../commands/context.js'
import type { Logger } from '../logger.js'
import { findExpiredSessions } from '../projections/session-logs.js'
import type { DbOrTrx } from '../store/database.js'

const TIMER_INTERVAL_MS = 1000
const TIMERS_FIRED_TOGETHER = 16

/**
 * Ends running sessions whose inactivity timeout has passed (`SessionExpired`; the log shows
 * `timeout`), and fires the timers of waits for outside events that are due (`TimerFired`).
 */
export class ExpirySweeper {
  private timer?: NodeJS.Timeout
  private timersTimer?: NodeJS.Timeout
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
    // Waits are timed to the second: their timers are looked for more often than expiries.
    this.timersTimer ??= setInterval(() => {
      this.running ??= this.fireTimers()
        .then(() => {})
        .catch((error: unknown) => this.logger.error({ err: error }, 'firing due timers failed'))
        .finally(() => (this.running = undefined))
    }, Math.min(TIMER_INTERVAL_MS, this.intervalMs))
  }

  /**
   * Fires the due timers, then expires overdue sessions, a bounded batch of each per call (the log
   * catches up before the next); returns how many sessions it expired.
   */
  async sweep(): Promise<number> {
    await this.fireTimers()
    let expired = 0
    for (const sessionId of await findExpiredSessions(this.db, this.ctx.now(), 500)) {
      if (await expireSession(this.ctx, sessionId)) expired++
    }
    return expired
  }

  /**
   * Fires the timers due now, TIMERS_FIRED_TOGETHER at a time (each is a read and two writes of its
   * own session: one after the other, a burst of due timers would wait on round trips); returns how
   * many fired a turn (the others' waits had ended).
   */
  async fireTimers(): Promise<number> {
    const firing = pLimit(TIMERS_FIRED_TOGETHER)
    const due = await dueTimers(this.db, this.ctx.now(), 500)
    const outcomes = await Promise.all(
      due.map((timer) =>
        firing(async () => {
          const fired = await fireTimer(this.ctx, timer)
          await dropTimer(this.db, timer)
          return fired
        }),
      ),
    )
    return outcomes.filter(Boolean).length
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    clearInterval(this.timersTimer)
    this.timer = this.timersTimer = undefined
    await this.running
  }
}
