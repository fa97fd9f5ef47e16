import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeSelfSignedCertificate } from '../../src/cli/self-signed-certificate.js'

/** A chat completion request as the server got it. */
export interface ChatRequest {
  path: string
  headers: Record<string, string | string[] | undefined>
  body: {
    model?: string
    messages?: { role: string; content: string }[]
    max_tokens?: number
    response_format?: { type: string }
    stream?: boolean
    [key: string]: unknown
  }
}

/**
 * How the model answers one request: its text (finished with `stop`), a text with another
 * `finish_reason` or token counts, or a whole HTTP answer of the test's choosing (an error, a body
 * that is no completion).
 */
export type ModelAnswer =
  | string
  | { content: string; finishReason?: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** A call of the request's forced tool with these arguments (a JSON text), as a model answers `tool_choice`. */
  | { toolArguments: string }
  | { status: number; body: string; contentType?: string }

export interface ChatCompletionsServer {
  /** The base URL a connection takes: `https://127.0.0.1:<port>/v1`. */
  baseUrl: string
  /** PEM file of its self-signed certificate, for the agent's CA. */
  caFile: string
  /** Every chat completion request, in order of arrival. */
  requests: ChatRequest[]
  /** The model ids `GET /v1/models` lists. */
  models: string[]
  /** How it answers chat completions from now on. */
  answerWith(answer: (request: ChatRequest) => ModelAnswer): void
  /** Answers each request `ms` after it arrived (0: at once); with `key`, only the requests made with that key. */
  delay(ms: number, key?: string): void
  /** Takes another key as well, as an endpoint shared by several customers does. */
  acceptKey(key: string): void
  /** Pieces a streamed answer is sent in are this far apart. */
  streamGapMs: number
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

/** Tokens as this server counts them: words. */
export const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length

const promptTokens = (request: ChatRequest): number => (request.body.messages ?? []).reduce((sum, message) => sum + wordCount(String(message.content)), 0)

/**
 * A real HTTPS server on 127.0.0.1 speaking the OpenAI-compatible chat completions protocol
 * (`GET /v1/models`, `POST /v1/chat/completions`, streamed as server-sent events when asked), its
 * answers written by the test: no model runs anywhere. It takes the bearer key `key` (and those of `acceptKey`).
 */
export async function startChatCompletionsServer(key: string, models: string[] = ['test-model']): Promise<ChatCompletionsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'flowd-model-'))
  const keyFile = join(dir, 'key.pem')
  const caFile = join(dir, 'cert.pem')
  makeSelfSignedCertificate({ keyFile, certFile: caFile }, { commonName: 'flowd test model', altNames: ['IP:127.0.0.1'], days: 1 })
  const requests: ChatRequest[] = []
  let answer: (request: ChatRequest) => ModelAnswer = () => 'ok'
  let delayMs = 0
  const keys = new Set([key])
  const delayByKey = new Map<string, number>()
  const server: ChatCompletionsServer = {
    baseUrl: '',
    caFile,
    requests,
    models,
    answerWith: (next) => void (answer = next),
    delay: (ms, forKey) => void (forKey === undefined ? (delayMs = ms) : delayByKey.set(forKey, ms)),
    acceptKey: (another) => void keys.add(another),
    streamGapMs: 20,
    down: async () => {},
    up: async () => {},
    close: async () => {},
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const complete = (res: ServerResponse, request: ChatRequest) => {
    const given = answer(request)
    if (typeof given === 'object' && 'status' in given) {
      res.writeHead(given.status, { 'content-type': given.contentType ?? 'application/json' })
      return res.end(given.body)
    }
    if (typeof given === 'object' && 'toolArguments' in given) {
      const tool = (request.body.tool_choice as { function?: { name?: string } } | undefined)?.function?.name ?? 'answer'
      const message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: given.toolArguments } }] }
      const counted = { prompt_tokens: promptTokens(request), completion_tokens: wordCount(given.toolArguments) }
      return json(res, 200, { id: `chatcmpl-${requests.length}`, object: 'chat.completion', model: request.body.model, choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: counted })
    }
    const { content, finishReason = 'stop', usage } = typeof given === 'string' ? { content: given } : given
    const counted = usage ?? { prompt_tokens: promptTokens(request), completion_tokens: wordCount(content) }
    const id = `chatcmpl-${requests.length}`
    const model = request.body.model ?? models[0]
    if (request.body.stream) return stream(res, { id, model, content, finishReason, usage: counted })
    json(res, 200, {
      id,
      object: 'chat.completion',
      created: 1_780_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
      usage: { ...counted, total_tokens: counted.prompt_tokens + counted.completion_tokens },
    })
  }
  const stream = (res: ServerResponse, done: { id: string; model?: string; content: string; finishReason: string; usage: { prompt_tokens: number; completion_tokens: number } }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const pieces = done.content.match(/\S+\s*|\s+/g) ?? []
    const chunk = (choice: object, extra: object = {}) => res.write(`data: ${JSON.stringify({ id: done.id, object: 'chat.completion.chunk', model: done.model, choices: [choice], ...extra })}\n\n`)
    let next = 0
    const send = () => {
      if (res.destroyed) return
      if (next < pieces.length) {
        chunk({ index: 0, delta: { ...(next === 0 && { role: 'assistant' }), content: pieces[next++] }, finish_reason: null })
        return void setTimeout(send, server.streamGapMs)
      }
      chunk({ index: 0, delta: {}, finish_reason: done.finishReason }, { usage: { ...done.usage, total_tokens: done.usage.prompt_tokens + done.usage.completion_tokens } })
      res.end('data: [DONE]\n\n')
    }
    send()
  }

  const delayed = new Set<NodeJS.Timeout>()
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const given = req.headers.authorization?.replace(/^Bearer /, '') ?? ''
      if (!keys.has(given)) return json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } })
      if (req.method === 'GET' && req.url === '/v1/models') return json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'test' })) })
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: `no ${req.method} ${req.url}` } })
      let body: ChatRequest['body']
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return json(res, 400, { error: { message: 'the body is not JSON' } })
      }
      const request: ChatRequest = { path: req.url, headers: { ...req.headers }, body }
      requests.push(request)
      const wait = delayByKey.get(given) ?? delayMs
      if (wait === 0) return complete(res, request)
      const timer = setTimeout(() => {
        delayed.delete(timer)
        if (!res.destroyed) complete(res, request)
      }, wait)
      delayed.add(timer)
    })
  }
  const https = createHttpsServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, handler)
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      https.once('error', reject)
      https.listen(port, '127.0.0.1', () => {
        https.off('error', reject)
        resolve()
      })
    })
  const stop = async () => {
    // A held answer's timer would keep the test's process alive long after its connection is gone.
    for (const timer of delayed) clearTimeout(timer)
    delayed.clear()
    if (!https.listening) return
    https.closeAllConnections()
    await new Promise<void>((resolve) => https.close(() => resolve()))
  }
  await listen(0)
  const { port } = https.address() as AddressInfo
  server.baseUrl = `https://127.0.0.1:${port}/v1`
  server.down = stop
  server.up = () => listen(port)
  server.close = async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return server
}
