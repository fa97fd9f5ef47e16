import type { AiConnectionSettings } from './ai-connection.js'
import { CALL_LIMITS, secretMarker, type HttpCallAnswer, type HttpCallRequest } from './outside-call.js'

/**
 * The OpenAI-compatible chat completions protocol as the service speaks it: OpenAI, Azure OpenAI,
 * Ollama, vLLM, llama.cpp's server and most gateways answer `{baseUrl}/models` and
 * `{baseUrl}/chat/completions` with a bearer key. Requests are built here as outside calls, the
 * key as its secret's marker, so that what is recorded never holds it.
 */

type Connection = Pick<AiConnectionSettings, 'baseUrl' | 'apiKeySecret' | 'model' | 'headers'>

const headersOf = (connection: Connection, withBody: boolean, accept = 'application/json') => [
  ...connection.headers,
  { name: 'Authorization', value: `Bearer ${secretMarker(connection.apiKeySecret)}` },
  { name: 'Accept', value: accept },
  ...(withBody ? [{ name: 'Content-Type', value: 'application/json' }] : []),
]

/** The endpoint's model list. */
export const modelsRequest = (connection: Connection): HttpCallRequest => ({
  method: 'GET',
  url: `${connection.baseUrl}/models`,
  headers: headersOf(connection, false),
  body: null,
  timeoutMs: CALL_LIMITS.timeoutMs.default,
})

/** The smallest completion there is, for endpoints that list no models: one token of the connection's model. */
export const pingRequest = (connection: Connection): HttpCallRequest => ({
  method: 'POST',
  url: `${connection.baseUrl}/chat/completions`,
  headers: headersOf(connection, true),
  body: JSON.stringify({ model: connection.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }),
  timeoutMs: CALL_LIMITS.timeoutMs.default,
})

/** The most model ids a connection test shows. */
export const LISTED_MODELS = 100

/** What a connection test found: whether a flow's call would get through, and if not, why in words. */
export type ConnectionCheck = { ok: true; models: string[] } | { ok: false; models: string[]; problem: string }

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The ids of the protocol's model list (`{ data: [{ id }] }`), or undefined when the body is not one. */
export function modelIds(body: string): string[] | undefined {
  const parsed = parseJson(body) as { data?: unknown } | undefined
  if (!parsed || !Array.isArray(parsed.data)) return undefined
  const ids = parsed.data.flatMap((model: unknown) => (model && typeof (model as { id?: unknown }).id === 'string' ? [(model as { id: string }).id] : []))
  return ids.length === parsed.data.length ? ids : undefined
}

/** The error message an endpoint gave (`{ error: { message } }`, `{ error: "…" }` or `{ message }`), cut short. */
function endpointMessage(body: string): string {
  const parsed = parseJson(body) as { error?: unknown; message?: unknown } | undefined
  const error = parsed?.error
  const message =
    typeof error === 'string' ? error
    : error && typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message
    : typeof parsed?.message === 'string' ? parsed.message
    : body
  const flat = message.replace(/\s+/g, ' ').trim()
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat
}

/** Why a call got no usable answer, in words a person setting up a connection can act on; undefined for a 2xx. */
export function callProblem(answer: HttpCallAnswer, connection: Connection, path: string): string | undefined {
  if ('error' in answer) {
    switch (answer.error) {
      case 'refused_address':
        return `${answer.message}: an endpoint on a private network needs its range allowed by the operator (WEBHOOK_ALLOWED_PRIVATE_CIDRS)`
      case 'timeout':
        return `${connection.baseUrl}${path} gave no answer in time (${answer.message})`
      case 'secret':
        return `the key could not be read: ${answer.message}`
      default:
        return `${connection.baseUrl}${path} could not be reached: ${answer.message}`
    }
  }
  if (answer.status >= 200 && answer.status < 300) return undefined
  const said = endpointMessage(answer.body)
  if (answer.status === 401 || answer.status === 403) {
    return `the endpoint refused the key (${answer.status}${said ? `: ${said}` : ''}); check the secret ${connection.apiKeySecret}`
  }
  if (answer.status === 404) return `the endpoint has no ${connection.baseUrl}${path} (404); baseUrl usually ends in /v1`
  return `${connection.baseUrl}${path} answered ${answer.status}${said ? `: ${said}` : ''}`
}

/**
 * The outcome of a connection test from the model list's answer and, when the endpoint lists no
 * models, the one-token call's (`ping`). A listed model that is not the connection's is a problem:
 * the flow's calls would ask for a model the endpoint does not have.
 */
export function connectionCheck(connection: Connection, models: HttpCallAnswer, ping?: HttpCallAnswer): ConnectionCheck {
  const listed = 'error' in models || models.status < 200 || models.status >= 300 ? undefined : modelIds(models.body)
  if (listed) {
    const shown = listed.slice(0, LISTED_MODELS)
    if (listed.includes(connection.model)) return { ok: true, models: shown }
    return { ok: false, models: shown, problem: `the endpoint does not list the model ${connection.model}${shown.length ? `; it lists ${shown.slice(0, 10).join(', ')}${listed.length > 10 ? ', …' : ''}` : ''}` }
  }
  if (!needsPing(models)) return { ok: false, models: [], problem: callProblem(models, connection, '/models')! }
  if (!ping) return { ok: false, models: [], problem: 'the endpoint lists no models; a call to its chat completions is needed to tell' }
  const problem = callProblem(ping, connection, '/chat/completions')
  return problem ? { ok: false, models: [], problem } : { ok: true, models: [] }
}

/** Whether the model list's answer leaves the question open, so that the one-token call must decide. */
export const needsPing = (models: HttpCallAnswer): boolean =>
  !('error' in models) && models.status !== 401 && models.status !== 403 && (models.status < 200 || models.status >= 300 || modelIds(models.body) === undefined)

/** One message of a chat completion's conversation. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** What a flow's model call asks of the endpoint. */
export interface CompletionAsk {
  model: string
  messages: readonly ChatMessage[]
  maxTokens: number
  /** The answer must be one JSON object (classify, extract): asked by the protocol's `response_format`, at temperature 0. */
  json: boolean
  /** The answer is streamed (`stream: true`, with its usage in the last chunk), so that its text can be shown as it comes. */
  stream?: boolean
  /**
   * The JSON object is asked for as the arguments of a call of this one tool instead, for endpoints
   * that refuse `response_format` ({@link refusesJsonMode}).
   */
  tool?: AnswerTool
  timeoutMs: number
}

/** A function the model must call with the answer as its arguments (a JSON Schema object). */
export interface AnswerTool {
  name: string
  description: string
  parameters: Record<string, unknown>
}

/** The form a structured answer is asked in: the protocol's JSON mode, or a forced tool call. */
const structuredForm = (ask: CompletionAsk) => {
  if (ask.tool) return { temperature: 0, tools: [{ type: 'function', function: ask.tool }], tool_choice: { type: 'function', function: { name: ask.tool.name } } }
  return ask.json ? { temperature: 0, response_format: { type: 'json_object' } } : {}
}

/** A chat completion as an outside call, the key as its secret's marker. */
export const completionRequest = (connection: Connection, ask: CompletionAsk): HttpCallRequest => ({
  method: 'POST',
  url: `${connection.baseUrl}/chat/completions`,
  headers: headersOf(connection, true, ask.stream ? 'text/event-stream' : 'application/json'),
  body: JSON.stringify({
    model: ask.model,
    messages: ask.messages,
    max_tokens: ask.maxTokens,
    ...structuredForm(ask),
    ...(ask.stream && { stream: true, stream_options: { include_usage: true } }),
  }),
  timeoutMs: ask.timeoutMs,
  ...(ask.stream && { streamsText: true as const }),
})

/** Tokens a call took, as the endpoint counted them (0 where it did not say). */
export interface TokenUsage {
  promptTokens: number
  completionTokens: number
}

/** What a completion's recorded answer gave: the model's text, or why there is none, with the tokens it took either way. */
export type Completion = { ok: true; text: string; usage: TokenUsage } | { ok: false; problem: string; usage: TokenUsage }

const NO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0 }

const tokenCount = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0)

/**
 * Reads a chat completion (`choices[0].message.content`, `usage`), whole or streamed as chunks. An answer cut at the token
 * limit (`finish_reason` `length`) is a problem: its text ends mid-sentence, and its JSON does not
 * close.
 */
export function parseCompletion(answer: HttpCallAnswer, connection: Connection, maxTokens: number): Completion {
  const problem = callProblem(answer, connection, '/chat/completions')
  if (problem !== undefined || 'error' in answer) return { ok: false, problem: problem ?? 'no answer', usage: NO_USAGE }
  const parsed = (parseJson(answer.body) ?? streamedCompletion(answer.body)) as { choices?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | undefined
  const usage: TokenUsage = { promptTokens: tokenCount(parsed?.usage?.prompt_tokens), completionTokens: tokenCount(parsed?.usage?.completion_tokens) }
  const choice = Array.isArray(parsed?.choices) ? (parsed.choices[0] as { message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown } | undefined) : undefined
  const content = choice?.message?.content
  const text = typeof content === 'string' && content !== '' ? content : (toolArguments(choice?.message?.tool_calls) ?? content)
  if (typeof text !== 'string') return { ok: false, problem: 'the endpoint answered something other than a chat completion (no choices[0].message.content)', usage }
  if (choice?.finish_reason === 'length') return { ok: false, problem: `the answer was cut at the connection's limit of ${maxTokens} tokens per call`, usage }
  return { ok: true, text, usage }
}

/** The arguments of the first tool call of an answer, as the model wrote them (a JSON text). */
function toolArguments(calls: unknown): string | undefined {
  const first = Array.isArray(calls) ? (calls[0] as { function?: { arguments?: unknown } } | undefined) : undefined
  return typeof first?.function?.arguments === 'string' ? first.function.arguments : undefined
}

/**
 * Whether the endpoint refused the protocol's JSON mode (a 400 or 422 naming `response_format`):
 * a structured step then asks again with a forced tool call.
 */
export function refusesJsonMode(answer: HttpCallAnswer): boolean {
  return !('error' in answer) && (answer.status === 400 || answer.status === 422) && /response_format/i.test(answer.body)
}

/** One chunk of a streamed completion as the protocol sends it. */
interface CompletionChunk {
  choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[]
  usage?: unknown
}

/** The chunks of a streamed answer (`data: {…}` lines of server-sent events, up to `data: [DONE]`). */
export function completionChunks(body: string): CompletionChunk[] {
  const chunks: CompletionChunk[] = []
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue
    const data = line.slice(5).trim()
    if (data === '[DONE]') break
    const chunk = parseJson(data)
    if (chunk && typeof chunk === 'object') chunks.push(chunk as CompletionChunk)
  }
  return chunks
}

/** The text a chunk adds to the answer; '' for one that adds none. */
export const chunkText = (chunk: CompletionChunk): string => {
  const content = chunk.choices?.[0]?.delta?.content
  return typeof content === 'string' ? content : ''
}

/** A streamed answer put together as the one completion it amounts to; undefined when the body holds no chunk. */
function streamedCompletion(body: string): { choices: { message: { content: string }; finish_reason: unknown }[]; usage?: unknown } | undefined {
  const chunks = completionChunks(body)
  if (chunks.length === 0) return undefined
  const finishReason = chunks.map((chunk) => chunk.choices?.[0]?.finish_reason).findLast((reason) => typeof reason === 'string')
  const usage = chunks.map((chunk) => chunk.usage).findLast((given) => given !== undefined && given !== null)
  return { choices: [{ message: { content: chunks.map(chunkText).join('') }, finish_reason: finishReason }], ...(usage !== undefined && { usage }) }
}

/** The JSON object a structured answer holds, tolerating a fence around it; undefined when it holds none. */
export function answerObject(text: string): Record<string, unknown> | undefined {
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1')
  const parsed = parseJson(unfenced)
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined
}
