import { comparePositions, matchesFilter, type Position, type RecordedEvent, type StreamFilter } from './port.js'
import type { WakeUp } from './wake-up.js'

export interface Page {
  events: RecordedEvent[]
  /** How far the log was read: the last event when the page is full, else the newest visible one. */
  through: Position
}

export type PageReader = (options: { from: Position; limit: number }) => Promise<Page>

/** Events a member may hold unconsumed before it is let go to catch up on its own. */
const MEMBER_BUFFER_BATCHES = 10
const TAIL_PAGE = 1000

/**
 * A live subscriber's place in the tail: the events offered to it and not yet taken, and how far
 * the tail has looked for it.
 */
export class TailMember {
  private buffer: RecordedEvent[] = []
  private notify?: () => void
  /** Let go (its buffer overflowed, or the tail closed): once the buffer is drained, catch up alone. */
  released = false

  readonly filter: StreamFilter
  readonly maxBatch: number
  position: Position

  constructor(
    filter: StreamFilter,
    maxBatch: number,
    /** Every event up to here was offered; after a release, the last event buffered. */
    position: Position,
  ) {
    this.filter = filter
    this.maxBatch = maxBatch
    this.position = position
  }

  offer(events: readonly RecordedEvent[], through: Position): void {
    if (this.released) return
    for (const event of events) {
      if (comparePositions(event.position, this.position) > 0 && matchesFilter(event.stream, this.filter)) this.buffer.push(event)
    }
    if (comparePositions(through, this.position) > 0) this.position = through
    if (this.buffer.length > this.maxBatch * MEMBER_BUFFER_BATCHES) this.release()
    this.notify?.()
  }

  release(): void {
    if (this.released) return
    this.released = true
    const last = this.buffer[this.buffer.length - 1]
    // Offered but not buffered (other streams) since then is safe to skip; after it, it is not.
    if (last) this.position = last.position
    this.notify?.()
  }

  /** The next events (up to maxBatch); empty when released with nothing left, or aborted. */
  async take(signal?: AbortSignal): Promise<RecordedEvent[]> {
    while (this.buffer.length === 0 && !this.released && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.notify = undefined
          signal?.removeEventListener('abort', done)
          resolve()
        }
        this.notify = done
        signal?.addEventListener('abort', done, { once: true })
      })
    }
    return this.buffer.splice(0, this.maxBatch)
  }
}

/**
 * One reader of the head of the log for every live subscription of a process: each wake-up costs
 * one query, whatever the number of subscribers, and each subscriber gets the events of its streams.
 * Subscribers catch up on their own first and join once they have reached where the tail is.
 */
export class LiveTail {
  private readonly members = new Set<TailMember>()
  private running?: Promise<void>
  private readonly stopping = new AbortController()
  /** Every event up to here was offered to every member. Meaningful while there are members. */
  position: Position | undefined

  private readonly readPage: PageReader
  private readonly wakeUp: WakeUp
  private readonly pollIntervalMs: number

  constructor(
    readPage: PageReader,
    wakeUp: WakeUp,
    pollIntervalMs: number,
  ) {
    this.readPage = readPage
    this.wakeUp = wakeUp
    this.pollIntervalMs = pollIntervalMs
  }

  /** Joins a subscriber that has read everything up to `position`, which must not be behind the tail. */
  join(filter: StreamFilter, maxBatch: number, position: Position): TailMember | undefined {
    if (this.stopping.signal.aborted) return undefined
    if (this.position !== undefined && this.members.size > 0 && comparePositions(position, this.position) < 0) return undefined
    if (this.members.size === 0) this.position = position
    const member = new TailMember(filter, maxBatch, position)
    this.members.add(member)
    this.running ??= this.run().finally(() => (this.running = undefined))
    return member
  }

  leave(member: TailMember): void {
    this.members.delete(member)
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal
    // After a wake-up the new events may still sit above the horizon (an older transaction is
    // still open); look again soon, backing off to the poll interval.
    let retryMs = 0
    while (this.members.size > 0 && !signal.aborted) {
      const seen = this.wakeUp.wakeUpCount
      const from = this.position!
      let page: Page
      try {
        page = await this.readPage({ from, limit: TAIL_PAGE })
      } catch {
        await this.wakeUp.wait(this.pollIntervalMs, signal)
        continue
      }
      for (const member of this.members) {
        // A member that joined behind where this page starts (it joined when the tail had no
        // members, with a read from further on in flight) would miss the events between: it
        // catches up on its own from where it is, then joins again.
        if (comparePositions(member.position, from) < 0) member.release()
        else member.offer(page.events, page.through)
        if (member.released) this.members.delete(member)
      }
      const moved = comparePositions(page.through, from) > 0
      // A member that joined meanwhile may have set the tail further on.
      if (comparePositions(page.through, this.position!) > 0) this.position = page.through
      if (page.events.length === TAIL_PAGE) continue
      if (moved) retryMs = 0
      const woken = await this.wakeUp.wait(retryMs || this.pollIntervalMs, signal, seen)
      retryMs = woken ? 2 : retryMs && Math.min(retryMs * 2, this.pollIntervalMs)
    }
  }

  async close(): Promise<void> {
    this.stopping.abort()
    for (const member of this.members) member.release()
    this.members.clear()
    await this.running
  }
}
