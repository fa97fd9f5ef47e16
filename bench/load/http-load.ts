// The ingest load generator, in a process of its own: autocannon POSTs one text message per request
// to /v1/sessions/{id}/message, cycling through the sessions, at a fixed number of connections
// (each with one request in flight) for a fixed time.

import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { workerMain } from '../lib/processes.js'
import { Samples, summarize, type LatencySummary } from '../lib/stats.js'

export interface HttpLoadInput {
  base: string
  apiKey: string
  sessionIds: string[]
  connections: number
  durationSeconds: number
}

export interface HttpLoadOutput {
  durationSeconds: number
  sent: number
  /** Answers by status code. */
  statusCodes: Record<string, number>
  accepted: number
  errors: number
  timeouts: number
  /** Of the 202 answers, in milliseconds, measured here from each request's start. */
  latencyMs: LatencySummary
  /** autocannon's own view (its histogram has 1 ms resolution), for comparison. */
  autocannon: { p50: number; p99: number; max: number; average: number }
  maxRssBytes: number
  /** 202 answers in each second of the run: a falling series means the cost per message grows as the tables do. */
  acceptedEachSecond: number[]
  /** CPU this load generator used while it ran, in average cores. */
  cpuCores: number
}

workerMain<HttpLoadInput, HttpLoadOutput>(async (input) => {
  let next = 0
  const body = JSON.stringify({ type: 'text', text: { body: 'hello from the benchmark' } })
  const latencies = new Samples()
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const perSecond: number[] = []
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: input.base,
        connections: input.connections,
        pipelining: 1,
        duration: input.durationSeconds,
        timeout: 10,
        headers: { 'x-api-key': input.apiKey, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            body,
            setupRequest: (request) => ({ ...request, path: `/v1/sessions/${input.sessionIds[next++ % input.sessionIds.length]}/message` }),
          },
        ],
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    )
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode !== 202) return
      latencies.push(responseTime)
      const second = Math.floor((performance.now() - started) / 1000)
      perSecond[second] = (perSecond[second] ?? 0) + 1
    })
  })
  const cpu = process.cpuUsage(cpuBefore)
  const statusCodes: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0
  return {
    durationSeconds: result.duration,
    sent: result.requests.sent,
    statusCodes,
    accepted: statusCodes['202'] ?? 0,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: summarize(latencies.values()),
    autocannon: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, average: result.latency.average },
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    acceptedEachSecond: Array.from(perSecond, (n) => n ?? 0),
    cpuCores: Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - started)) * 100) / 100,
  }
})
