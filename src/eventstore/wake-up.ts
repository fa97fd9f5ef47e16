import type pg from 'pg'

/**
 * Tells subscribers that new events may be readable. Appends in this process wake them directly;
 * on Postgres a LISTEN connection carries wake-ups from appends in other processes.
 */
export class WakeUp {
  private waiters = new Set<() => void>()
  private listener?: pg.PoolClient
  private closed = false

  constructor(
    private readonly channel: string,
    private readonly pool?: pg.Pool,
  ) {}

  wake(): void {
    const waiters = this.waiters
    this.waiters = new Set()
    for (const resolve of waiters) resolve()
  }

  /** Resolves true when woken, false when the time ran out or the signal aborted. */
  wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false)
    void this.listen()
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
    client.on('notification', () => this.wake())
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
    this.closed = true
    const client = this.listener
    if (client) {
      client.removeAllListeners('notification')
      await client.query(`unlisten ${this.channel}`).catch(() => {})
      this.releaseListener?.(false)
    }
    this.wake()
  }
}
