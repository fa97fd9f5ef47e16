import { ApiError, type FlowApi } from '../api'
import { SseParser, type SseEvent } from './sse'

export interface StreamHandlers {
  onEvent(event: SseEvent): void
  /** The stream broke and is being opened again (after `retry` ms). */
  onReconnecting(): void
  /** The stream stopped for good: the session ended (`end` event), or the service refused it. */
  onStopped(error?: ApiError): void
}

const DEFAULT_RETRY_MS = 2000

/**
 * Follows a session's event stream until its `end` event or until `signal` aborts. The editor's
 * token must go in a header, which EventSource cannot send; so this reads a fetch's body and
 * parses it, and does what EventSource does on a dropped connection: waits `retry` ms and asks
 * again with `Last-Event-ID`, missing nothing and getting nothing twice. A refusal (4xx) stops it;
 * a 401 is renewed by the API client first.
 */
export async function followSession(api: FlowApi, sessionId: string, signal: AbortSignal, handlers: StreamHandlers): Promise<void> {
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
      const body = await api.streamSession(sessionId, lastEventId, signal)
      const reader = body.getReader()
      const decoder = new TextDecoder()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.push(decoder.decode(value, { stream: true }))
      }
    } catch (error) {
      if (signal.aborted) return
      if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) {
        handlers.onStopped(error)
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
