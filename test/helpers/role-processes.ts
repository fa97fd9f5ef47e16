import { allProjections } from '../../src/all-projections.js'
import { SWEEPER_LEASE } from '../../src/engine/partitions.js'
import type { ReceivedRequest } from './https-receiver.js'
import { logEntries, type Service } from './service-process.js'
import { expect } from './service-api.js'

// What the tests of a deployment split by role share: the webhook settings, the leases processes
// log, and what their webhooks carry.

/** Several processes start side by side, on a machine that may be busy. */
export const ROLE_START_TIMEOUT_MS = 120_000

/** Webhooks to the test's HTTPS receiver on 127.0.0.1, retried every second after a failure. */
export const WEBHOOK_ENV = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' }

interface LeaseEntry {
  msg?: string
  lease?: string
  leases?: string[]
}

/** The leases a process logged `message` for. */
export const leasesLogged = (proc: Service, message: string): string[] =>
  [...new Set(logEntries<LeaseEntry>(proc, message).flatMap((entry) => (entry.lease ? [entry.lease] : [])))].sort()

/** The leases a live process holds by its logs: each taken and not lost since. */
export function leasesHeld(proc: Service): string[] {
  const held = new Set<string>()
  for (const entry of logEntries<LeaseEntry>(proc)) {
    if (entry.msg === 'lease taken; active' && entry.lease) held.add(entry.lease)
    else if (entry.msg === 'lease lost; standing by' && entry.lease) held.delete(entry.lease)
    else if (entry.msg === 'lease connection lost; its leases are given up') for (const lease of entry.leases ?? []) held.delete(lease)
  }
  return [...held].sort()
}

/** The lease of every read model. */
export const projectionLeases = allProjections.map((p) => `projection:${p.name}`).sort()

/** Whether an engine process has taken the sweeper's lease (by its logs). */
export const sweeps = (engine: Service): boolean => logEntries<LeaseEntry>(engine, 'lease taken; active').some((entry) => entry.lease === SWEEPER_LEASE)

/** The partitions an engine process logged last that it drives (`engine partitions held`); undefined before it first did. */
export const partitionsLogged = (engine: Service): number[] | undefined => logEntries<{ partitions: number[] }>(engine, 'engine partitions held').at(-1)?.partitions

export interface Webhook {
  sessionId: string
  messageId: string
}
export const parseWebhook = (request: ReceivedRequest): Webhook => JSON.parse(request.body) as Webhook

export async function sessionEvents(api: Service, apiKey: string, sessionId: string): Promise<{ type: string; data: { messageId: string } }[]> {
  return (await expect(api, apiKey, 200, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content
}
