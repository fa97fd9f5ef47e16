// The ceiling of the HTTP layer alone, for benchmark 1: fastify (the service's version) answering the
// send route's shape with 202 and a fresh id, body checked against a schema, no database, in a
// process of its own. Loaded by the same generator at the same concurrency as the service, it shows
// what any Node HTTP service could reach on this machine beside pgbench's single-row inserts.

import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import Fastify from 'fastify'
import { workerMain } from '../lib/processes.js'

export interface BareHttpInput {
  /** Seconds after which the server stops by itself, if nobody asked it to before. */
  maxSeconds: number
}

export interface BareHttpOutput {
  requests: number
  /** CPU the server used while it ran, in average cores. */
  cpuCores: number
}

/** What the server reports while it starts: where to send the load. */
export interface BareHttpProgress {
  base: string
}

const messageSchema = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'text' }, text: { type: 'object', required: ['body'], properties: { body: { type: 'string', maxLength: 4096 } } } },
} as const

workerMain<BareHttpInput, BareHttpOutput>(async (input, progress) => {
  const app = Fastify({ logger: false })
  let requests = 0
  let stop: () => void = () => {}
  const stopped = new Promise<void>((resolve) => (stop = resolve))
  app.post('/v1/sessions/:sessionId/message', { schema: { body: messageSchema } }, async (request, reply) => {
    requests++
    if (!request.headers['x-api-key']) return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'no key' })
    return reply.code(202).send({ messageId: randomUUID() })
  })
  app.post('/stop', async () => {
    stop()
    return { requests }
  })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  progress({ base } satisfies BareHttpProgress)
  const timer = setTimeout(stop, input.maxSeconds * 1000)
  await stopped
  clearTimeout(timer)
  const cpu = process.cpuUsage(cpuBefore)
  await app.close()
  return { requests, cpuCores: Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - started)) * 100) / 100 }
})
