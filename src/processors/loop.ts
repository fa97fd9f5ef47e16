import { setTimeout as delay } from 'node:timers/promises'
import type { EventStore, Position, RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import { FAILURES_BEFORE_PARKING, backoffMs, isTransient } from './failures.js'

// Every reader of the log (each read model, the webhook outbox, the engine) is a log processor run
// by this one loop: from its stored checkpoint, along the event store's live tail, batch by batch,
// with the same retries and the same failure isolation. What differs is what a processor does with
// a batch and where its checkpoint moves (with the effect, or after it); leases are the caller's
// (`whileLeased`), as a lease may cover more than one processor.

export interface BatchHandled {
  /** Where the processor has got: the batch's `through`, or where another reader moved its checkpoint. */
  position: Position
  /** Another reader moved the checkpoint: the loop reads the log again from `position`. */
  moved?: boolean
}

export interface LogProcessor {
  /** Names it in logs. */
  readonly name: string
  readonly streamPrefixes: readonly string[]
  readonly maxBatch: number
  /** Where it goes on from: its stored checkpoint, read when it starts and after every failure. */
  resume(): Promise<Position>
  /**
   * Handles the events after `from` up to `through` (the batch's last event or further on; the
   * events may be none, when the store reports having read past other streams only). The
   * checkpoint moves to `through` either way, so a processor whose streams are quiet is not left
   * behind a long stretch of others.
   */
  handle(batch: RecordedEvent[], from: Position, through: Position): Promise<BatchHandled>
  /**
   * Called once a batch has failed FAILURES_BEFORE_PARKING times in a row, not for a transient
   * reason: get past the failing event alone (parking its stream), so every other stream goes on;
   * returns where it got. Without it, the processor isolates failures itself, within `handle`.
   */
  isolate?(from: Position): Promise<Position>
  /** Each failure, before the pause that follows it. */
  failed?(error: unknown): void
}

/**
 * Runs `processor` until `signal` aborts. A failing batch is read again after a pause that grows
 * with the failures in a row (up to `retryCapMs`); transient ones (the database away, a lost race)
 * are retried as long as they last, others lead to `isolate`.
 */
export async function runLogProcessor(processor: LogProcessor, store: EventStore, logger: Logger, signal: AbortSignal, retryCapMs: number): Promise<void> {
  let failures = 0
  let position: Position | undefined
  while (!signal.aborted) {
    try {
      // From the stored checkpoint: another process may have moved it meanwhile.
      position ??= await processor.resume()
      if (processor.isolate && failures >= FAILURES_BEFORE_PARKING) {
        position = await processor.isolate(position)
        failures = 0
        continue
      }
      for await (const batch of store.subscribeAll({ from: position, streamPrefixes: processor.streamPrefixes, signal, maxBatch: processor.maxBatch })) {
        const handled = await processor.handle(batch.events, position, batch.through)
        failures = 0
        position = handled.position
        if (handled.moved) break
      }
    } catch (error) {
      failures = isTransient(error) ? 0 : failures + 1
      processor.failed?.(error)
      logger.error({ err: error, processor: processor.name, failures }, 'log processor failed; retrying')
      position = undefined
      await delay(backoffMs(Math.max(failures, 1), retryCapMs), undefined, { signal }).catch(() => {})
    }
  }
}
