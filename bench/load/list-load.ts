// The lists load generator, in a process of its own: for each case, a warm-up, then a fixed number
// of GET requests at a fixed concurrency (one request in flight per connection), each timed here
// from its start to the end of its body.

import { performance } from 'node:perf_hooks'
import { Agent, request } from 'undici'
import { workerMain } from '../lib/processes.js'
import { summarize, type LatencySummary } from '../lib/stats.js'

export interface ListCase {
  name: string
  path: string
  apiKey: string
}

export interface ListLoadInput {
  base: string
  cases: ListCase[]
  warmup: number
  requests: number
  concurrency: number
  /** A case stops early after this many seconds of measuring (with at least `minRequests` done). */
  caseSeconds: number
  minRequests: number
}

export interface ListCaseResult {
  name: string
  path: string
  latencyMs: LatencySummary
  /** Measuring time; a slow case stops at the time limit with fewer requests (latencyMs.count). */
  seconds: number
  errors: number
  /** From the last answer: totalElements and the items on the page. */
  totalElements: number
  items: number
}

workerMain<ListLoadInput, ListCaseResult[]>(async (input) => {
  const agent = new Agent({ connections: input.concurrency, keepAliveTimeout: 30_000 })
  const results: ListCaseResult[] = []
  try {
    for (const c of input.cases) {
      let errors = 0
      let last: { totalElements: number; content: unknown[] } = { totalElements: Number.NaN, content: [] }
      const once = async (): Promise<number> => {
        const started = performance.now()
        const response = await request(`${input.base}${c.path}`, { dispatcher: agent, headers: { 'x-api-key': c.apiKey } })
        const text = await response.body.text()
        const ms = performance.now() - started
        if (response.statusCode !== 200) {
          errors++
          if (errors === 1) process.stderr.write(`${c.name}: ${response.statusCode} ${text.slice(0, 500)}\n`)
        } else last = JSON.parse(text) as typeof last
        return ms
      }
      const runMany = async (count: number, seconds: number): Promise<number[]> => {
        const times: number[] = []
        const deadline = performance.now() + seconds * 1000
        let next = 0
        await Promise.all(
          Array.from({ length: input.concurrency }, async () => {
            while (next++ < count && (next <= input.minRequests || performance.now() < deadline)) times.push(await once())
          }),
        )
        return times
      }
      await runMany(input.warmup, input.caseSeconds / 3)
      errors = 0
      const started = performance.now()
      const times = await runMany(input.requests, input.caseSeconds)
      results.push({
        name: c.name,
        path: c.path,
        latencyMs: summarize(times),
        seconds: Math.round((performance.now() - started) / 100) / 10,
        errors,
        totalElements: last.totalElements,
        items: last.content.length,
      })
    }
  } finally {
    await agent.close()
  }
  return results
})
