import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import { backoffMs, isTransient } from '../processors/failures.js'

const TURN_KEEPS_CONFLICTING = 'TurnKeepsConflictingError'

/**
 * A turn's append lost to other writers of its session several times in a row: the session's
 * stream parks with this as its reason, and the engine's {@link ConflictRetries} tries it again.
 */
export class TurnKeepsConflictingError extends Error {
  override readonly name = TURN_KEEPS_CONFLICTING
  readonly conflicts: number

  constructor(stream: string, conflicts: number) {
    super(`${conflicts} appends in a row lost to other writers of ${stream}; the engine tries it again with backoff`)
    this.conflicts = conflicts
  }
}

/** Whether a parked stream waits for the engine's conflict retries: its reason, as `describeFailure` writes it, names the error. */
export const parkedForConflicts = (parked: { reason: string }): boolean => parked.reason.startsWith(`${TURN_KEEPS_CONFLICTING}:`)

/** The most a session waits between two scheduled tries; also how often parked sessions are adopted. */
export const CONFLICT_RETRY_CAP_MS = 10_000

interface ConflictRetriesOptions {
  /** Tries the stream's pending turns once; conflicting again, it schedules the stream again. */
  retry(stream: string): Promise<void>
  /** The streams parked for conflicts (in the database, whoever parked them). */
  parked(): Promise<string[]>
  logger: Logger
  metrics?: Metrics
  capMs?: number
}

interface Waiting {
  tries: number
  timer?: NodeJS.Timeout
  running?: Promise<void>
  /** Scheduled again while its try ran (its turn conflicted again, or it was adopted): one more try follows. */
  again: boolean
}

/**
 * The sessions whose turn keeps losing its append to other writers, each tried again on a timer of
 * its own, with backoff, until its pending turns are appended: one contested session never holds
 * the engine's batches for the others, and its messages are never given up. The sessions waiting
 * are kept in the database as streams parked for conflicts, rather than by holding the engine's
 * checkpoint before them (one session contested for good would cost a replay of the log since at
 * every start): the schedule adopts the ones it finds there when it starts and every `capMs`, so
 * none is lost to a restart, to a handover between engines, or to a `flowd processors retry` that
 * met conflicts in another process.
 */
export class ConflictRetries {
  private readonly waiting = new Map<string, Waiting>()
  private adopting?: NodeJS.Timeout
  private started = false
  /** Counts starts, so an adoption left running by a stop never runs beside a later start's. */
  private generation = 0

  private readonly options: ConflictRetriesOptions
  private readonly capMs: number

  constructor(options: ConflictRetriesOptions) {
    this.options = options
    this.capMs = options.capMs ?? CONFLICT_RETRY_CAP_MS
  }

  start(): void {
    if (this.started) return
    this.started = true
    void this.adopt(++this.generation)
  }

  /** Tries `stream` again after a pause; one already waiting keeps its timer. */
  schedule(stream: string): void {
    if (!this.started) return
    const waiting = this.waiting.get(stream)
    if (waiting?.running) waiting.again = true
    if (waiting) return
    this.waiting.set(stream, { tries: 0, again: false })
    this.options.metrics?.sessionsRetryingConflicts.set(this.waiting.size)
    this.next(stream)
  }

  async stop(): Promise<void> {
    this.started = false
    clearTimeout(this.adopting)
    const running = [...this.waiting.values()].map((waiting) => {
      clearTimeout(waiting.timer)
      return waiting.running
    })
    await Promise.all(running)
    this.waiting.clear()
    this.options.metrics?.sessionsRetryingConflicts.set(0)
  }

  private async adopt(generation: number): Promise<void> {
    try {
      const parked = await this.options.parked()
      if (generation === this.generation) for (const stream of parked) this.schedule(stream)
    } catch (error) {
      this.options.logger.warn({ err: error }, 'reading the sessions parked for conflicts failed; read again later')
    }
    if (this.started && generation === this.generation) this.adopting = setTimeout(() => void this.adopt(generation), this.capMs)
  }

  private next(stream: string): void {
    const waiting = this.waiting.get(stream)
    if (!waiting || !this.started) return
    waiting.tries++
    waiting.timer = setTimeout(() => {
      waiting.running = this.tryOnce(stream, waiting)
    }, backoffMs(waiting.tries, this.capMs))
  }

  private async tryOnce(stream: string, waiting: Waiting): Promise<void> {
    let failed = false
    try {
      await this.options.retry(stream)
    } catch (error) {
      failed = true
      const level = isTransient(error) ? 'warn' : 'error'
      this.options.logger[level]({ err: error, stream, tries: waiting.tries }, 'a session retried for conflicts failed; tried again later')
    }
    waiting.running = undefined
    if (failed || waiting.again) {
      waiting.again = false
      this.next(stream)
      return
    }
    this.waiting.delete(stream)
    this.options.metrics?.sessionsRetryingConflicts.set(this.waiting.size)
    this.options.logger.info({ stream, tries: waiting.tries }, 'a session retried for conflicts is no longer parked for them')
  }
}
