import type { DestinationState } from '../store/tables/webhook-destinations.js'

/**
 * A destination's health as the dispatchers share it. A healthy destination takes its fair share
 * of attempts; a failing one holds its deliveries behind one probe attempt at a time, each probe
 * after the next delay of the probe schedule, until a 2xx restores it.
 */
export interface DestinationHealth {
  state: DestinationState
  consecutiveFailures: number
  failingSince: Date | null
  lastError: string | null
  lastFailureAt: Date | null
  /** Probes that failed since it became failing. */
  probes: number
  nextProbeAt: Date | null
}

/** An attempt's outcome as the destination's health counts it. */
export interface DestinationAttempt {
  ok: boolean
  at: Date
  /** Why it failed, as recorded on the delivery (`HTTP 503`, `timeout: …`). */
  error: string | null
  /** Whether it was the one attempt a failing destination let through. */
  probe: boolean
}

export interface HealthPolicy {
  /** Failed attempts in a row (timeouts, refusals, non-2xx) that make a destination failing. */
  failuresBeforeFailing: number
  /** Seconds before each probe of a failing destination; the last one repeats. */
  probeSchedule: readonly number[]
}

export const HEALTHY: DestinationHealth = { state: 'healthy', consecutiveFailures: 0, failingSince: null, lastError: null, lastFailureAt: null, probes: 0, nextProbeAt: null }

const after = (at: Date, seconds: number): Date => new Date(at.getTime() + seconds * 1000)

const probeDelay = (policy: HealthPolicy, probes: number): number => policy.probeSchedule[Math.min(probes, policy.probeSchedule.length - 1)] ?? 0

/**
 * The health after `attempt`. A 2xx restores a destination at once; a failure counts, and the
 * `failuresBeforeFailing`-th in a row makes it failing, its first probe one delay later. A failed
 * probe moves the next one along the schedule; an attempt that was already in flight when the
 * destination became failing only counts.
 */
export function afterAttempt(health: DestinationHealth, attempt: DestinationAttempt, policy: HealthPolicy): DestinationHealth {
  if (attempt.ok) return HEALTHY
  const failed = { ...health, consecutiveFailures: health.consecutiveFailures + 1, lastError: attempt.error, lastFailureAt: attempt.at }
  if (health.state === 'healthy') {
    if (failed.consecutiveFailures < policy.failuresBeforeFailing) return failed
    return { ...failed, state: 'failing', failingSince: attempt.at, probes: 0, nextProbeAt: after(attempt.at, probeDelay(policy, 0)) }
  }
  if (!attempt.probe) return failed
  const probes = health.probes + 1
  return { ...failed, probes, nextProbeAt: after(attempt.at, probeDelay(policy, probes)) }
}

/** The health after each of `attempts`, in the order they were made. */
export const afterAttempts = (health: DestinationHealth, attempts: readonly DestinationAttempt[], policy: HealthPolicy): DestinationHealth =>
  attempts.reduce((current, attempt) => afterAttempt(current, attempt, policy), health)
