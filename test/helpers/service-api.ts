import type { Service } from './service-process.js'

// Calls to a service running as a child process, for the fault tests: every request is bounded.

export const REQUEST_TIMEOUT_MS = 5_000

export interface Reply {
  status: number
  body: any
  text: string
  retryAfter: string | null
}

export async function call(service: Service, apiKey: string, method: 'GET' | 'POST', path: string, payload?: object, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(`${service.base}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload ? { body: JSON.stringify(payload) } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    // Not JSON: kept as text for the message.
  }
  return { status: response.status, body, text, retryAfter: response.headers.get('retry-after') }
}

/** `call`, failing unless the answer is `status`. */
export async function expect(service: Service, apiKey: string, status: number, method: 'GET' | 'POST', path: string, payload?: object): Promise<any> {
  const reply = await call(service, apiKey, method, path, payload)
  if (reply.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${reply.status} ${reply.text}`)
  return reply.body
}
