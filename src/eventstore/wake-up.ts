import { randomUUID } from 'node:crypto'
import type pg from 'pg'

export interface WakeUpOptions {
  /** false: tell no other process (only where none follows: benchmarks). */
  notifyOtherProcesses?: boolean
  /** At most one NOTIFY this often: each is a commit serialised with every other notifying commit of the cluster. */
  notifyEveryMs?: number
  /** How often to look again whether another process listens (NOTIFY is only sent while one does). */
  listenersRecheckMs?: number
}

/** What a listener's connection is called, so that other processes can see it listens. */
const listenerName = (channel: string) => `flowd-listen:${channel}`.slice(0, 63)

/**
 * Tells subscribers that new events may be readable. Appends in this process wake them directly;
 * on Postgres a NOTIFY, sent after the append committed, carries the news to other processes,
 * which LISTEN on one connection.
 */
export class WakeUp {
  private waiters = new Set<() => void>()
  private listener?: pg.PoolClient
  /** The backend of this process's own listener, which does not count as another process. */
  private listenerPid?: number
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
  private readonly listenersRecheckMs: number
  /** Whether a process other than this one listened when last looked at; until then, assumed. */
  private othersListen = { listen: true, checkedAt: Number.NEGATIVE_INFINITY, checking: false }

  private readonly channel: string
  private readonly pool?: pg.Pool

  constructor(
    channel: string,
    pool?: pg.Pool,
    options: WakeUpOptions = {},
  ) {
    this.channel = channel
    this.pool = pool
    this.notifyOtherProcesses = options.notifyOtherProcesses ?? true
    this.notifyEveryMs = options.notifyEveryMs ?? 5
    this.listenersRecheckMs = options.listenersRecheckMs ?? 1000
  }

  /** Counts wake-ups: a subscriber notes it before reading, and a later wake-up means look again. */
  get wakeUpCount(): number {
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
    if (!this.anotherProcessListens()) return
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

  /**
   * Whether to NOTIFY: a process alone on the log (the usual single-process deployment) would pay a
   * commit, serialised with every other notifying commit, for every announcement nobody hears.
   * Listeners name their connection after the channel, so they show in `pg_stat_activity`. A
   * process that starts listening meanwhile is heard of within `listenersRecheckMs`; until then it
   * finds the events by polling, as it would after a lost notification.
   */
  private anotherProcessListens(): boolean {
    const known = this.othersListen
    if (!known.checking && performance.now() - known.checkedAt >= this.listenersRecheckMs) {
      known.checking = true
      this.pool!
        .query<{ listen: boolean }>(
          'select exists (select 1 from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> $2) as listen',
          [listenerName(this.channel), this.listenerPid ?? 0],
        )
        .then(
          ({ rows }) => (this.othersListen = { listen: rows[0]?.listen ?? true, checkedAt: performance.now(), checking: false }),
          () => (this.othersListen = { listen: true, checkedAt: performance.now(), checking: false }),
        )
    }
    return known.listen
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
   * Resolves true when woken (at once when `wakeUpCount` has moved past `wakeUpsSeen`), false when the
   * time ran out or the signal aborted.
   */
  wait(ms: number, signal?: AbortSignal, wakeUpsSeen?: number): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false)
    void this.listen()
    if (wakeUpsSeen !== undefined && wakeUpsSeen !== this.wakes) return Promise.resolve(true)
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
    // Destroyed, not returned to the pool: it carries the listener's name.
    const release = () => {
      if (released) return
      released = true
      client.off('error', onError)
      client.removeAllListeners('notification')
      client.release(true)
      if (this.listener === client) {
        this.listener = undefined
        this.listenerPid = undefined
      }
      this.listening = undefined
    }
    const onError = () => release()
    client.on('error', onError)
    client.on('notification', (notification) => {
      if (notification.payload !== this.origin) this.wake()
    })
    let pid: number | undefined
    try {
      const { rows } = await client.query<{ pid: number }>("select set_config('application_name', $1, false), pg_backend_pid() as pid", [listenerName(this.channel)])
      pid = rows[0]?.pid
      await client.query(`listen ${this.channel}`)
    } catch (error) {
      release()
      throw error
    }
    if (this.closed) {
      release()
      return
    }
    this.listener = client
    this.listenerPid = pid
    this.releaseListener = release
  }

  private releaseListener?: () => void

  /** Sends at once a NOTIFY that waits for its turn, and resolves once none is on its way: every announcement so far is committed. */
  async flush(): Promise<void> {
    while (this.notifyTimer || this.notifying) {
      if (this.notifyTimer) {
        clearTimeout(this.notifyTimer)
        this.notifyTimer = undefined
        this.sendNotify()
      }
      await this.notifying
    }
  }

  async close(): Promise<void> {
    // Closed first: the NOTIFY waiting for its turn still goes, no later one follows.
    this.closed = true
    await this.flush()
    const client = this.listener
    if (client) {
      client.removeAllListeners('notification')
      await client.query(`unlisten ${this.channel}`).catch(() => {})
      this.releaseListener?.()
    }
    this.wake()
  }
}
