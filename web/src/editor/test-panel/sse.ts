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

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

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
