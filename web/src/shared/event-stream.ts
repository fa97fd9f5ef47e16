// Server-Sent Events read from a fetch: the editor's token and the dashboard's workspace go in
// headers, which EventSource cannot send. Free of imports, so the service's tests run it as it is.

/** One Server-Sent Event as the stream sent it. */
export interface SseEvent {
  event: string
  data: string
  /** The `id:` of this event, when it had one. */
  id?: string
}

/**
 * A Server-Sent Events parser (the WHATWG event-stream format) fed with decoded text as it
 * arrives: a line may be split across chunks, lines end in LF, CR or CRLF, comments are skipped,
 * several `data:` lines join with LF. `retry:` sets the reconnection delay it reports.
 */
export class SseParser {
  #buffer = ''
  #event = ''
  #data: string[] = []
  #id: string | undefined
  /** A CR ended the last chunk: an LF opening the next one belongs to it. */
  #pendingCr = false
  retryMs: number | undefined

  private readonly onEvent: (event: SseEvent) => void

  constructor(onEvent: (event: SseEvent) => void) {
    this.onEvent = onEvent
  }

  push(chunk: string): void {
    let text = chunk
    if (this.#pendingCr && text.startsWith('\n')) text = text.slice(1)
    this.#pendingCr = text.endsWith('\r')
    this.#buffer += text
    const lines = this.#buffer.split(/\r\n|\r|\n/)
    this.#buffer = lines.pop() ?? ''
    for (const line of lines) this.#line(line)
  }

  #line(line: string): void {
    if (line === '') return this.#dispatch()
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'event':
        this.#event = value
        break
      case 'data':
        this.#data.push(value)
        break
      case 'id':
        if (!value.includes('\u0000')) this.#id = value
        break
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value)
        break
    }
  }

  #dispatch(): void {
    const id = this.#id
    this.#id = undefined
    if (this.#data.length === 0) {
      this.#event = ''
      return
    }
    const event: SseEvent = { event: this.#event || 'message', data: this.#data.join('\n'), ...(id === undefined ? {} : { id }) }
    this.#event = ''
    this.#data = []
    this.onEvent(event)
  }
}

/** Opens the stream once more, after the event `lastEventId` when given: a body to read. */
export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<ReadableStream<Uint8Array>>

export interface StreamHandlers {
  onEvent(event: SseEvent): void
  /** The connection broke; it is opened again after the stream's `retry` delay. */
  onReconnecting(): void
  /** The stream stopped for good: after its `end` event, or with the service's refusal. */
  onStopped(refusal?: Error): void
}

const DEFAULT_RETRY_MS = 2000

/** The HTTP status an error carries (the editor's and the dashboard's ApiError do). */
const statusOf = (error: unknown): number | undefined =>
  error instanceof Error && 'status' in error && typeof error.status === 'number' ? error.status : undefined

/**
 * Follows an event stream until its `end` event or until `signal` aborts, as EventSource would: a
 * dropped connection is opened again after `retry` ms with `Last-Event-ID`, missing nothing and
 * getting nothing twice. A refusal (4xx other than 429) stops it.
 */
export async function followEventStream(open: OpenStream, signal: AbortSignal, handlers: StreamHandlers): Promise<void> {
  let lastEventId: string | undefined
  let retryMs = DEFAULT_RETRY_MS
  let ended = false
  while (!signal.aborted) {
    // A new parser per connection: an event the dropped one cut short is sent again whole.
    const parser = new SseParser((event) => {
      if (event.id !== undefined) lastEventId = event.id
      if (event.event === 'end') ended = true
      handlers.onEvent(event)
    })
    try {
      const reader = (await open(lastEventId, signal)).getReader()
      const decoder = new TextDecoder()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.push(decoder.decode(value, { stream: true }))
      }
    } catch (error) {
      if (signal.aborted) return
      const status = statusOf(error)
      if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
        handlers.onStopped(error as Error)
        return
      }
    }
    if (ended) {
      handlers.onStopped()
      return
    }
    if (signal.aborted) return
    retryMs = parser.retryMs ?? retryMs
    handlers.onReconnecting()
    await sleep(retryMs, signal)
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })
