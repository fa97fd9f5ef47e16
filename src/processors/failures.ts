import { EventStoreUnavailableError } from '../eventstore/port.js'
import { isDatabaseUnavailable } from '../store/unavailable.js'

/**
 * SQLSTATEs of a transaction that lost a race and succeeds when run again: serialization failure,
 * deadlock, lock not available, query cancelled (a statement timeout).
 */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', '55P03', '57014'])

/**
 * Whether `error` says nothing about the event being processed: the database or the event store
 * is away, or the transaction lost a race. Such a failure is retried, with backoff, for as long as it lasts; any
 * other failure may come back on every try (a deterministic one) and parks its stream after
 * {@link FAILURES_BEFORE_PARKING} tries.
 */
export function isTransient(error: unknown): boolean {
  if (isDatabaseUnavailable(error) || error instanceof EventStoreUnavailableError) return true
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && RETRYABLE_SQLSTATES.has(code)
}

/** Tries of one event before its stream is parked: enough to tell a deterministic failure from a passing one. */
export const FAILURES_BEFORE_PARKING = 3

/** The wait before try `attempt + 1` (1-based): doubling from 50 ms, capped, with jitter so racing processes part. */
export function backoffMs(attempt: number, capMs = 5_000): number {
  const base = Math.min(capMs, 50 * 2 ** Math.max(0, attempt - 1))
  return Math.round(base / 2 + Math.random() * (base / 2))
}

/** What a parked stream records as its reason: the error's message, without a stack, bounded. */
export function describeFailure(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return message.length > 500 ? `${message.slice(0, 497)}...` : message
}
