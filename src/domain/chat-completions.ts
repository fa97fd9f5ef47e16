import type { AiConnectionSettings } from './ai-connection.js'
import { CALL_LIMITS, secretMarker, type HttpCallAnswer, type HttpCallRequest } from './outside-call.js'

/**
 * The OpenAI-compatible chat completions protocol as the service speaks it: OpenAI, Azure OpenAI,
 * Ollama, vLLM, llama.cpp's server and most gateways answer `{baseUrl}/models` and
 * `{baseUrl}/chat/completions` with a bearer key. Requests are built here as outside calls, the
 * key as its secret's marker, so that what is recorded never holds it.
 */

type Connection = Pick<AiConnectionSettings, 'baseUrl' | 'apiKeySecret' | 'model' | 'headers'>

const headersOf = (connection: Connection, withBody: boolean) => [
  ...connection.headers,
  { name: 'Authorization', value: `Bearer ${secretMarker(connection.apiKeySecret)}` },
  { name: 'Accept', value: 'application/json' },
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
