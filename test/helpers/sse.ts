import { spawn } from 'node:child_process'
import type { Test } from 'tap'

export interface SseEvent {
  event: string
  id?: string
  data: string
  /** `performance.now()` when curl had passed the whole event on, on the clock of the HTTPS receiver's `arrivedAt`. */
  arrivedAt: number
}

/** `curl -N` on a stream: the events parsed as they arrive, and a way to stop it. */
export function curlStream(t: Test, url: string, headers: Record<string, string>) {
  const args = ['-sS', '-N', url, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])]
  const curl = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const events: SseEvent[] = []
  let raw = ''
  let buffer = ''
  curl.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    raw += chunk
    buffer += chunk
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event: SseEvent = { event: 'message', data: '', arrivedAt: performance.now() }
      let isEvent = false
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(': ')
        const value = rest.join(': ')
        if (field === 'event') event.event = value
        else if (field === 'id') event.id = value
        else if (field === 'data') event.data = value
        else continue
        isEvent = true
      }
      if (isEvent) events.push(event)
    }
  })
  const exited = new Promise<number | null>((resolve) => curl.once('exit', resolve))
  t.teardown(() => {
    curl.kill()
  })
  return { events, raw: () => raw, exited, stop: () => curl.kill() }
}
