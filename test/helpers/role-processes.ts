import type { Test } from 'tap'
import { freePort } from './cli.js'
import type { ReceivedRequest } from './https-receiver.js'
import { answers, spawnCli, until, type Service } from './service-process.js'
import { expect } from './service-api.js'

// `flowd start --role` processes against one Postgres database, for the tests that run a deployment
// split by role: starting them, reading their JSON log lines, and what their webhooks carry.

/** Several processes start side by side, on a machine that may be busy. */
export const ROLE_START_TIMEOUT_MS = 120_000

/** Webhooks to the test's HTTPS receiver on 127.0.0.1, retried every second after a failure. */
export const WEBHOOK_ENV = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' }

/** `flowd start --role <role>` on a free port, answering /healthz. */
export async function startRole(t: Test, role: string, env: NodeJS.ProcessEnv): Promise<Service> {
  const port = await freePort()
  const proc = spawnCli(t, ['start', '--role', role], { ...env, PORT: String(port) })
  const base = `http://127.0.0.1:${port}`
  await until(proc, `the ${role} process's GET /healthz to answer 200`, ROLE_START_TIMEOUT_MS, () => answers(`${base}/healthz`, 200))
  return { ...proc, base }
}

export interface LogEntry {
  msg?: string
  lease?: string
  leases?: string[]
  partitions?: number[]
}

/**
 * The JSON log lines a process printed on stdout (at LOG_LEVEL=info and above), in order. Complete
 * lines only: the output read so far may end in the middle of one.
 */
export function logEntries(proc: Service): LogEntry[] {
  return proc
    .stdout()
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogEntry)
}

/** The leases a process logged `message` for. */
export function leasesLogged(proc: Service, message: string): string[] {
  const leases = new Set<string>()
  for (const entry of logEntries(proc)) if (entry.msg === message && entry.lease) leases.add(entry.lease)
  return [...leases].sort()
}

/** The leases a live process holds by its logs: each taken and not lost since. */
export function leasesHeld(proc: Service): string[] {
  const held = new Set<string>()
  for (const entry of logEntries(proc)) {
    if (entry.msg === 'lease taken; active' && entry.lease) held.add(entry.lease)
    else if (entry.msg === 'lease lost; standing by' && entry.lease) held.delete(entry.lease)
    else if (entry.msg === 'lease connection lost; its leases are given up') for (const lease of entry.leases ?? []) held.delete(lease)
  }
  return [...held].sort()
}

export interface Webhook {
  sessionId: string
  messageId: string
}
export const parseWebhook = (request: ReceivedRequest): Webhook => JSON.parse(request.body) as Webhook

export async function sessionEvents(api: Service, apiKey: string, sessionId: string): Promise<{ type: string; data: { messageId: string } }[]> {
  return (await expect(api, apiKey, 200, 'GET', `/v1/sessions/${sessionId}/events?size=500`)).content
}
