/**
 * Gathers writes made one at a time into batches written together (group commit): one batch at a
 * time, each of everything added while the one before it was being written, so a busy writer pays
 * one round trip and one commit for many items, and an item added when nothing is being written
 * goes at once, never held back. Under load the batches grow by themselves: as many items as
 * arrived during one write.
 *
 * `keyOf`: items of one key never share a batch; the later waits for the next, in order (the event
 * store's appends to one stream, each decided on the revision the one before left).
 */
export interface BatchOptions<T> {
  maxBatch?: number
  keyOf?: (item: T) => string
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
  private writing = false

  private readonly write: BatchWriter<T, R>
  private readonly maxBatch: number
  private readonly keyOf: ((item: T) => string) | undefined

  constructor(write: BatchWriter<T, R>, { maxBatch = 500, keyOf }: BatchOptions<T> = {}) {
    this.write = write
    this.maxBatch = maxBatch
    this.keyOf = keyOf
  }

  /** Settles once its item's batch is written (with the item's answer), or failed. */
  add(item: T): Promise<R> {
    return new Promise<R>((written, failed) => {
      this.queued.push({ item, written, failed })
      if (!this.writing) void this.writeQueued()
    })
  }

  private async writeQueued(): Promise<void> {
    this.writing = true
    try {
      while (this.queued.length > 0) {
        const batch = this.nextBatch()
        let answers: (R | Error)[] | void
        try {
          answers = await this.write(batch.map((queued) => queued.item))
        } catch (error) {
          for (const queued of batch) queued.failed(error)
          continue
        }
        batch.forEach((queued, index) => {
          const answer = answers ? answers[index] : undefined
          if (answer instanceof Error) queued.failed(answer)
          else queued.written(answer as R)
        })
      }
    } finally {
      this.writing = false
    }
  }

  /** The oldest queued items, at most `maxBatch` and one per key; the rest keep their order. */
  private nextBatch(): Queued<T, R>[] {
    if (!this.keyOf) return this.queued.splice(0, this.maxBatch)
    const batch: Queued<T, R>[] = []
    const left: Queued<T, R>[] = []
    const keys = new Set<string>()
    for (const queued of this.queued) {
      const key = this.keyOf(queued.item)
      if (batch.length < this.maxBatch && !keys.has(key)) {
        keys.add(key)
        batch.push(queued)
      } else {
        left.push(queued)
      }
    }
    this.queued = left
    return batch
  }
}
