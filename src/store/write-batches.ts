/**
 * Gathers writes made one at a time into batches written together (group commit): up to
 * `maxInFlight` batches at a time (one by default), each of everything added while the writer had
 * no room, so a busy writer pays one round trip and one commit for many items, and an item added
 * when there is room goes at once, never held back. Under load the batches grow by themselves: as
 * many items as arrived during a write.
 *
 * `keyOf`: items of one key never share a batch, nor go while a batch holding their key is being
 * written; the later waits for the next, in order (the event store's appends to one stream, each
 * decided on the revision the one before left).
 */
export interface BatchOptions<T> {
  maxBatch?: number
  keyOf?: (item: T) => string
  /** Batches written at once (1); each further one starts only when there is something to write. */
  maxInFlight?: number
}

/** Writes a batch; void when every item shares the outcome, else one answer per item, in order: its result, or its own error. */
export type BatchWriter<T, R> = (items: T[]) => Promise<(R | Error)[] | void>

interface Queued<T, R> {
  item: T
  written: (result: R) => void
  failed: (error: unknown) => void
}

export class WriteBatches<T, R = void> {
  private queued: Queued<T, R>[] = []
  private inFlight = 0
  /** Keys of the batches being written: their next items wait for them. */
  private readonly keysInFlight = new Set<string>()

  private readonly write: BatchWriter<T, R>
  private readonly maxBatch: number
  private readonly keyOf: ((item: T) => string) | undefined
  private readonly maxInFlight: number

  constructor(write: BatchWriter<T, R>, { maxBatch = 500, keyOf, maxInFlight = 1 }: BatchOptions<T> = {}) {
    this.write = write
    this.maxBatch = maxBatch
    this.keyOf = keyOf
    this.maxInFlight = maxInFlight
  }

  /** Settles once its item's batch is written (with the item's answer), or failed. */
  add(item: T): Promise<R> {
    return new Promise<R>((written, failed) => {
      this.queued.push({ item, written, failed })
      this.writeQueued()
    })
  }

  private writeQueued(): void {
    while (this.inFlight < this.maxInFlight && this.queued.length > 0) {
      const batch = this.nextBatch()
      if (batch.length === 0) return
      this.inFlight += 1
      void this.writeBatch(batch).finally(() => {
        this.inFlight -= 1
        if (this.keyOf) for (const queued of batch) this.keysInFlight.delete(this.keyOf(queued.item))
        this.writeQueued()
      })
    }
  }

  private async writeBatch(batch: Queued<T, R>[]): Promise<void> {
    let answers: (R | Error)[] | void
    try {
      answers = await this.write(batch.map((queued) => queued.item))
    } catch (error) {
      for (const queued of batch) queued.failed(error)
      return
    }
    batch.forEach((queued, index) => {
      const answer = answers ? answers[index] : undefined
      if (answer instanceof Error) queued.failed(answer)
      else queued.written(answer as R)
    })
  }

  /** The oldest queued items, at most `maxBatch` and one per key, none of a key being written; the rest keep their order. */
  private nextBatch(): Queued<T, R>[] {
    if (!this.keyOf) return this.queued.splice(0, this.maxBatch)
    const batch: Queued<T, R>[] = []
    const left: Queued<T, R>[] = []
    for (const queued of this.queued) {
      const key = this.keyOf(queued.item)
      if (batch.length < this.maxBatch && !this.keysInFlight.has(key)) {
        this.keysInFlight.add(key)
        batch.push(queued)
      } else {
        left.push(queued)
      }
    }
    this.queued = left
    return batch
  }
}
