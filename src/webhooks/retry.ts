/** The longest wait a receiver's `Retry-After` can ask for; beyond it, we retry after a day anyway. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 3600
/** Each delay is spread over ±10 % so that receivers coming back up are not hit by every retry at once. */
const JITTER = 0.1

/**
 * `Retry-After` in seconds from `now`: delta-seconds or an HTTP date; undefined when absent or
 * unreadable. Capped at a day.
 */
export function parseRetryAfter(header: string | string[] | undefined, now: Date): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined || value.trim() === '') return undefined
  const trimmed = value.trim()
  // An HTTP date always ends in GMT; anything else that is not whole seconds is unreadable.
  const seconds = /^\d+$/.test(trimmed) ? Number(trimmed) : / GMT$/.test(trimmed) ? (Date.parse(trimmed) - now.getTime()) / 1000 : NaN
  if (!Number.isFinite(seconds)) return undefined
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS)
}

/**
 * Seconds to wait before the next attempt, after `attemptsMade` attempts of this round failed;
 * undefined when the schedule is used up (the delivery is dead). `schedule[i]` is the delay
 * before attempt i + 1. A `Retry-After` the receiver sent wins when it asks for longer.
 */
export function nextRetryDelay(schedule: readonly number[], attemptsMade: number, retryAfterSeconds?: number, random: () => number = Math.random): number | undefined {
  const base = schedule[attemptsMade]
  if (base === undefined) return undefined
  const jittered = base * (1 - JITTER + 2 * JITTER * random())
  return retryAfterSeconds === undefined ? jittered : Math.max(jittered, retryAfterSeconds)
}

/** Retry-After is only a request to wait when the receiver is overloaded or rate-limiting. */
export const honoursRetryAfter = (status: number): boolean => status === 429 || status === 503
