/** A small client of the service's HTTP API for the benchmarks' setup steps. */
export class Api {
  readonly base: string
  readonly apiKey: string

  constructor(
    base: string,
    apiKey: string,
  ) {
    this.base = base
    this.apiKey = apiKey
  }

  async call<T = any>(method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, expected: number, payload?: unknown): Promise<T> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'x-api-key': this.apiKey, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    if (response.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${text}`)
    return (text ? JSON.parse(text) : undefined) as T
  }
}

/** Runs `task` for 0..count-1 with at most `concurrency` at once; resolves with the results in order. */
export async function inParallel<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++
        results[i] = await task(i)
      }
    }),
  )
  return results
}

/** The echo flow of the tests: asks, repeats the answer (saved in the workspace variable `said`), asks again. */
export const echoFlow = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Say something' } }, input: { kind: 'text' }, saveAs: 'said' } },
    { id: 'check', type: 'condition', position: { x: 400, y: 0 }, data: { rules: [{ id: 'bye', variable: 'said', operator: 'equals', value: 'bye' }] } },
    { id: 'say', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'You said {{said}}' } }] } },
    { id: 'end', type: 'end', position: { x: 600, y: 200 }, data: {} },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'check' },
    { id: 'c', source: 'check', sourceHandle: 'bye', target: 'end' },
    { id: 'd', source: 'check', sourceHandle: 'default', target: 'say' },
    { id: 'e', source: 'say', target: 'ask' },
  ],
}
