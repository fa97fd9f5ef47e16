import createClient, { type Client } from 'openapi-fetch'
import { Webhook } from 'standardwebhooks'
import type { components, operations, paths, webhooks } from './schema.js'

export type { components, operations, paths, webhooks }

/** The body of every webhook the service sends (a turn, or a card event of a session). */
export type WebhookBody = components['schemas']['WebhookBody']

export type FlowClient = Client<paths>

export interface FlowClientOptions {
  /** Where the service answers, without `/v1`: e.g. `https://flows.example.com`. */
  baseUrl: string
  /** An API key, sent as `X-Api-Key` (your backend). */
  apiKey?: string
  /** Or the embedded editor's access token, sent as a bearer token; a function is asked on every request. */
  accessToken?: string | (() => string | undefined)
  /** A fetch of your own (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch
}

/**
 * A client of the Conversation Flow Service's API, typed from its OpenAPI document: every path,
 * parameter, body and answer is checked by TypeScript. It is openapi-fetch's client: calls answer
 * `{ data, error, response }` and never throw on an HTTP status.
 */
export function createFlowClient(options: FlowClientOptions): FlowClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), ...(options.fetch && { fetch: options.fetch }) })
  client.use({
    onRequest({ request }) {
      if (options.apiKey) request.headers.set('x-api-key', options.apiKey)
      const token = typeof options.accessToken === 'function' ? options.accessToken() : options.accessToken
      if (token) request.headers.set('authorization', `Bearer ${token}`)
      return request
    },
  })
  return client
}

/** A webhook that failed verification: wrong signature, a timestamp too far from now, or missing headers. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
}

/**
 * Verifies a webhook as the service signs it (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, HMAC-SHA256 with the API key's signing secret `whsec_…`) and answers its
 * body. `rawBody` must be the bytes as received, before any JSON parsing. A timestamp more than five
 * minutes away from now is refused, against replays.
 */
export function verifyWebhook(signingSecret: string, headers: Headers | Record<string, string | string[] | undefined>, rawBody: string): WebhookBody {
  const plain: Record<string, string> = {}
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers)
  for (const [name, value] of entries) if (value !== undefined) plain[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  try {
    return new Webhook(signingSecret).verify(rawBody, plain) as WebhookBody
  } catch (error) {
    throw new WebhookVerificationError(error instanceof Error ? error.message : String(error))
  }
}
