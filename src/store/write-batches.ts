interface Queued<T> {
  item: T
  written: () => void
  failed: (error: unknown) => void
}

/**
 * Gathers writes made one at a time into batches written together: one batch at a time, each of
 * everything added while the one before it was being written, so a busy writer pays one round trip
 * and one commit for many items. `add` settles once its item's batch is written, or failed.
 */
export class WriteBatches<T> {
  private queued: Queued<T>[] = []
  private writing?: Promise<void>

  private readonly write: (items: T[]) => Promise<void>
  private readonly maxBatch: number

  constructor(
    write: (items: T[]) => Promise<void>,
    maxBatch = 500,
  ) {
    this.write = write
    this.maxBatch = maxBatch
  }

  add(item: T): Promise<void> {
    return new Promise((written, failed) => {
      this.queued.push({ item, written, failed })
      this.writeQueued()
    })
  }

  private writeQueued(): void {
    if (this.writing || this.queued.length === 0) return
    const batch = this.queued.splice(0, this.maxBatch)
    this.writing = this.write(batch.map((queued) => queued.item))
      .then(
        () => batch.forEach((queued) => queued.written()),
        (error: unknown) => batch.forEach((queued) => queued.failed(error)),
      )
      .finally(() => {
        this.writing = undefined
        this.writeQueued()
      })
  }
}
