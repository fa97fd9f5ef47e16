import { setTimeout as delay } from 'node:timers/promises'
import type { Position, RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import { backoffMs } from '../processors/failures.js'

/**
 * Sessions whose turns run at once: enough to keep the database's connections busy, few enough
 * that a session taken next (another organization's) waits behind little work on a single
 * connection (the embedded database).
 */
export const TURNS_IN_FLIGHT = 32
/**
 * Events read past the checkpoint before reading waits for the turns to catch up: the window in
 * which an organization's backlog is shared with the others instead of ahead of them.
 */
export const READ_AHEAD_EVENTS = 5_000

/** A session whose pending turns are to be run: the revision its events were read to, and its first trigger read. */
export interface SessionTurns {
  sessionId: string
  /** Whose share it takes. */
  organizationId: string
  seenThrough: bigint
  /** Where its stream parks should its turns fail, and what tells whether it waits behind a parked event. */
  trigger: RecordedEvent
}

/** What reading the log handed over, done once every session and kanban event it named has been handled. */
interface Window {
  through: Position
  events: number
  outstanding: number
}

interface Queued extends SessionTurns {
  windows: Window[]
}

export interface FairTurnsWork {
  /** Runs a session's pending turns; throws only what is transient (it is tried again). */
  runTurns(turns: SessionTurns): Promise<void>
  /** Carries out a turn's kanban actions; throws only what is transient. */
  carryOutKanban(event: RecordedEvent): Promise<void>
  /** Every event read up to `through` is handled: the checkpoint may move there. */
  handledThrough(through: Position): void
}

/**
 * The engine's work between reading the log and moving its checkpoint. The log is read ahead (up to
 * READ_AHEAD_EVENTS) and the sessions to drive wait in one queue per organization; TURNS_IN_FLIGHT
 * at a time are taken round the organizations, one from each in turn, so an organization's backlog
 * holds another's next turn behind at most one session of each organization. A session runs once at
 * a time (the turns it gets later wait until it is done, then take their turn again); kanban
 * actions are carried out one at a time in log order. The checkpoint moves only past windows whose
 * work is all done, so a trigger read ahead and not yet run is read again after a restart.
 */
export class FairTurns {
  private readonly byOrganization = new Map<string, Queued[]>()
  private readonly queued = new Map<string, Queued>()
  /** Sessions running, each with what it got since it started (run once it is done). */
  private readonly running = new Map<string, Queued | undefined>()
  private readonly windows: Window[] = []
  private readonly kanban: { event: RecordedEvent; window: Window }[] = []
  private kanbanRunning?: Promise<void>
  private readonly inFlight = new Set<Promise<void>>()
  private eventsHeld = 0
  private roomWaiters: (() => void)[] = []
  private controller = new AbortController()

  private readonly work: FairTurnsWork
  private readonly logger: Logger

  constructor(work: FairTurnsWork, logger: Logger) {
    this.work = work
    this.logger = logger
  }

  /**
   * Takes what reading the log found up to `through` (`events`: how many it read); resolves once
   * there is room to read further.
   */
  async add(through: Position, events: number, sessions: readonly SessionTurns[], kanban: readonly RecordedEvent[]): Promise<void> {
    const window: Window = { through, events, outstanding: sessions.length + kanban.length }
    this.windows.push(window)
    this.eventsHeld += events
    for (const turns of sessions) this.enqueue(turns, window)
    for (const event of kanban) this.kanban.push({ event, window })
    this.pump()
    this.settleWindows()
    while (this.eventsHeld > READ_AHEAD_EVENTS && !this.controller.signal.aborted) await new Promise<void>((resolve) => this.roomWaiters.push(resolve))
  }

  /** Drops the work not started, waits for the work running, and starts afresh (reading again from the checkpoint). */
  async reset(): Promise<void> {
    this.controller.abort()
    this.byOrganization.clear()
    this.queued.clear()
    for (const session of this.running.keys()) this.running.set(session, undefined)
    this.kanban.length = 0
    while (this.inFlight.size > 0 || this.kanbanRunning) await Promise.all([...this.inFlight, this.kanbanRunning])
    this.windows.length = 0
    this.eventsHeld = 0
    this.wakeReaders()
    this.controller = new AbortController()
  }

  private enqueue(turns: SessionTurns, window: Window): void {
    const { sessionId } = turns
    const waiting = this.queued.get(sessionId) ?? this.running.get(sessionId)
    if (waiting) {
      waiting.seenThrough = turns.seenThrough
      waiting.windows.push(window)
      return
    }
    const queued: Queued = { ...turns, windows: [window] }
    if (this.running.has(sessionId)) {
      this.running.set(sessionId, queued)
      return
    }
    this.queue(queued)
  }

  private queue(queued: Queued): void {
    this.queued.set(queued.sessionId, queued)
    const line = this.byOrganization.get(queued.organizationId)
    if (line) line.push(queued)
    else this.byOrganization.set(queued.organizationId, [queued])
  }

  /** The next session: the first of the organization whose turn it is, which then goes to the back of the round. */
  private next(): Queued | undefined {
    for (const [organizationId, line] of this.byOrganization) {
      const queued = line.shift()!
      this.byOrganization.delete(organizationId)
      if (line.length > 0) this.byOrganization.set(organizationId, line)
      this.queued.delete(queued.sessionId)
      return queued
    }
    return undefined
  }

  private pump(): void {
    while (this.inFlight.size < TURNS_IN_FLIGHT) {
      const queued = this.next()
      if (!queued) break
      this.running.set(queued.sessionId, undefined)
      const { signal } = this.controller
      const running = this.untilDone(() => this.work.runTurns(queued), signal).then(() => {
        this.inFlight.delete(running)
        const next = this.running.get(queued.sessionId)
        this.running.delete(queued.sessionId)
        if (signal.aborted) return
        for (const window of queued.windows) window.outstanding--
        if (next) this.queue(next)
        this.settleWindows()
        this.pump()
      })
      this.inFlight.add(running)
    }
    if (this.kanban.length > 0) this.kanbanRunning ??= this.runKanban().finally(() => (this.kanbanRunning = undefined))
  }

  private async runKanban(): Promise<void> {
    const { signal } = this.controller
    for (let next = this.kanban.shift(); next && !signal.aborted; next = this.kanban.shift()) {
      const { event, window } = next
      await this.untilDone(() => this.work.carryOutKanban(event), signal)
      if (signal.aborted) return
      window.outstanding--
      this.settleWindows()
    }
  }

  /** Runs `work` until it succeeds or the work is reset: what reaches here is transient (the database away). */
  private async untilDone(work: () => Promise<void>, signal: AbortSignal): Promise<void> {
    for (let failures = 1; !signal.aborted; failures++) {
      try {
        return await work()
      } catch (error) {
        this.logger.error({ err: error, failures }, 'engine work failed; trying again')
        await delay(backoffMs(failures), undefined, { signal }).catch(() => {})
      }
    }
  }

  /** Moves the checkpoint past the windows done, oldest first, and lets reading go on. */
  private settleWindows(): void {
    let through: Position | undefined
    while (this.windows[0]?.outstanding === 0) {
      const window = this.windows.shift()!
      this.eventsHeld -= window.events
      through = window.through
    }
    if (!through) return
    this.work.handledThrough(through)
    if (this.eventsHeld <= READ_AHEAD_EVENTS) this.wakeReaders()
  }

  private wakeReaders(): void {
    const waiters = this.roomWaiters
    this.roomWaiters = []
    for (const wake of waiters) wake()
  }
}
