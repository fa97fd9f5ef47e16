import { randomUUID } from 'node:crypto'
import type pg from 'pg'

export interface WakeUpOptions {
  /** false: tell no other process (only where none follows: benchmarks). */
  notifyOtherProcesses?: boolean
  /** At most one NOTIFY this often: each is a commit serialised with every other notifying commit of the cluster. */
  notifyEveryMs?: number
}

/**
 * Tells subscribers that new events may be readable. Appends in this process wake them directly;
 * on Postgres a NOTIFY, sent after the append committed, carries the news to other processes,
 * which LISTEN on one connection.
 */
export class WakeUp {
  private waiters = new Set<() => void>()
  private listener?: pg.PoolClient
  private closed = false
  private wakes = 0
  /** Sent with each NOTIFY so this process ignores its own (it woke its subscribers already). */
  private readonly origin = randomUUID()
  private readonly notifyOtherProcesses: boolean
  private readonly notifyEveryMs: number
  private notifying?: Promise<void>
  private notifyAgain = false
  private notifyTimer?: NodeJS.Timeout
  private lastNotifyAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly channel: string,
    private readonly pool?: pg.Pool,
    options: WakeUpOptions = {},
  ) {
    this.notifyOtherProcesses = options.notifyOtherProcesses ?? true
    this.notifyEveryMs = options.notifyEveryMs ?? 5
  }

  /** Counts wake-ups: a subscriber notes it before reading, and a later wake-up means look again. */
  get generation(): number {
    return this.wakes
  }

  wake(): void {
    this.wakes++
    const waiters = this.waiters
    this.waiters = new Set()
    for (const resolve of waiters) resolve()
  }

  /**
   * An append committed: wakes this process's subscribers and tells the other processes. NOTIFY
   * runs outside the append's transaction (inside it, it serialises every commit of the cluster),
   * coalesced: at most one at a time and one every `notifyEveryMs`, each covering the appends
   * committed before it was sent.
   */
  announce(): void {
    this.wake()
    this.tellOtherProcesses()
  }

  private tellOtherProcesses(): void {
    if (!this.pool || !this.notifyOtherProcesses || this.closed) return
    if (this.notifying) {
      // Sent perhaps before this append committed: one more after it.
      this.notifyAgain = true
      return
    }
    if (this.notifyTimer) return
    const wait = this.lastNotifyAt + this.notifyEveryMs - performance.now()
    if (wait > 0) {
      this.notifyTimer = setTimeout(() => {
        this.notifyTimer = undefined
        this.sendNotify()
      }, wait)
      this.notifyTimer.unref()
      return
    }
    this.sendNotify()
  }

  private sendNotify(): void {
    this.lastNotifyAt = performance.now()
    this.notifying = this.pool!
      .query('select pg_notify($1, $2)', [this.channel, this.origin])
      .then(
        () => undefined,
        // Polling still delivers everything to the other processes.
        () => undefined,
      )
      .finally(() => {
        this.notifying = undefined
        if (this.notifyAgain) {
          this.notifyAgain = false
          this.tellOtherProcesses()
        }
      })
  }

  /**
   * Resolves true when woken (at once when a wake-up came after `seenGeneration`), false when the
   * time ran out or the signal aborted.
   */
  wait(ms: number, signal?: AbortSignal, seenGeneration?: number): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false)
    void this.listen()
    if (seenGeneration !== undefined && seenGeneration !== this.wakes) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        this.waiters.delete(onWake)
        resolve(woken)
      }
      const onWake = () => done(true)
      const onAbort = () => done(false)
      const timer = setTimeout(() => done(false), ms)
      this.waiters.add(onWake)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  private listening?: Promise<void>

  private listen(): Promise<void> {
    if (!this.pool || this.closed) return Promise.resolve()
    this.listening ??= this.connectListener().catch(() => {
      // Polling still delivers everything; try to listen again on a later wait.
      this.listening = undefined
    })
    return this.listening
  }

  private async connectListener(): Promise<void> {
    const client = await this.pool!.connect()
    let released = false
    // Once: an error may arrive after close() gave the client back (the database going away).
    const release = (destroy: boolean) => {
      if (released) return
      released = true
      client.off('error', onError)
      client.removeAllListeners('notification')
      client.release(destroy)
      if (this.listener === client) this.listener = undefined
      this.listening = undefined
    }
    const onError = () => release(true)
    client.on('error', onError)
    client.on('notification', (notification) => {
      if (notification.payload !== this.origin) this.wake()
    })
    await client.query(`listen ${this.channel}`)
    if (this.closed) {
      release(true)
      return
    }
    this.listener = client
    this.releaseListener = release
  }

  private releaseListener?: (destroy: boolean) => void

  async close(): Promise<void> {
    if (this.notifyTimer) {
      clearTimeout(this.notifyTimer)
      this.notifyTimer = undefined
      this.sendNotify()
    }
    this.closed = true
    await this.notifying
    const client = this.listener
    if (client) {
      client.removeAllListeners('notification')
      await client.query(`unlisten ${this.channel}`).catch(() => {})
      this.releaseListener?.(false)
    }
    this.wake()
  }
}
