import t from 'tap'
import { followEventStream, SseParser, type OpenStream, type SseEvent } from '../../web/src/shared/event-stream.js'

// The test panel's reading of a session stream, without a browser: the event-stream parser and
// the reconnection with Last-Event-ID (test-panel.test.ts follows a real session in a browser).

/** A refusal as the editor's API client throws it. */
class Refused extends Error {
  readonly status: number

  constructor(status: number) {
    super(`HTTP ${status}`)
    this.status = status
  }
}

const parse = (...chunks: string[]): SseEvent[] => {
  const events: SseEvent[] = []
  const parser = new SseParser((event) => events.push(event))
  for (const chunk of chunks) parser.push(chunk)
  return events
}

t.test('the parser reads events split anywhere, in any line ending, skipping comments', async (t) => {
  const stream = 'retry: 2000\n\n: keep-alive\n\nevent: debug\ndata: {"a":1}\n\nevent: turn\nid: 1/2\ndata: {"b":2}\n\n'
  const whole = parse(stream)
  t.same(whole, [
    { event: 'debug', data: '{"a":1}' },
    { event: 'turn', data: '{"b":2}', id: '1/2' },
  ])
  for (let cut = 1; cut < stream.length; cut++) t.same(parse(stream.slice(0, cut), stream.slice(cut)), whole, `split at ${cut}`)
  t.same(parse('event: end\r\ndata: {}\r', '\n\r\n'), [{ event: 'end', data: '{}' }], 'CRLF, its CR and LF in different chunks')
  t.same(parse('data: one\ndata: two\n\n'), [{ event: 'message', data: 'one\ntwo' }], 'data lines join with LF; an event with no name is a "message"')
  t.same(parse('event: turn\ndata: {"half":'), [], 'an event not yet ended by a blank line is not dispatched')
  const parser = new SseParser(() => {})
  parser.push('retry: 15\n\n')
  t.equal(parser.retryMs, 15, 'retry sets the reconnection delay')
})

/** Connections that answer, one after another, the given texts (or refusals). */
function connections(answers: (string | Refused)[]) {
  const asked: (string | undefined)[] = []
  const open: OpenStream = async (lastEventId) => {
    asked.push(lastEventId)
    const answer = answers.shift()
    if (answer === undefined) throw new Error('no more connections expected')
    if (answer instanceof Refused) throw answer
    const bytes = new TextEncoder().encode(answer)
    return new ReadableStream<Uint8Array>({
      start(controller) {
        // Byte by byte: a UTF-8 character and a line are split across reads.
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]))
        controller.close()
      },
    })
  }
  return { open, asked }
}

const follow = async (open: OpenStream) => {
  const events: SseEvent[] = []
  let reconnects = 0
  const stopped = await new Promise<Error | 'ended'>((resolve) => {
    void followEventStream(open, new AbortController().signal, {
      onEvent: (event) => events.push(event),
      onReconnecting: () => reconnects++,
      onStopped: (error) => resolve(error ?? 'ended'),
    })
  })
  return { events, reconnects, stopped }
}

t.test('a dropped stream is opened again after the last event id, and the event it cut short comes whole', async (t) => {
  const { open, asked } = connections([
    'retry: 1\n\nevent: debug\ndata: {"n":"Olá"}\n\nevent: turn\nid: 5/5\ndata: {"n":1}\n\nevent: debug\ndata: {"n":2',
    'event: debug\ndata: {"n":2}\n\nevent: turn\nid: 7/7\ndata: {"n":2}\n\nevent: end\ndata: {"status":"completed"}\n\n',
  ])
  const { events, reconnects, stopped } = await follow(open)
  t.same(asked, [undefined, '5/5'], 'the second connection resumes after the last turn seen')
  t.equal(reconnects, 1)
  t.same(
    events.map((e) => `${e.event} ${e.data}`),
    ['debug {"n":"Olá"}', 'turn {"n":1}', 'debug {"n":2}', 'turn {"n":2}', 'end {"status":"completed"}'],
    'each event once, whole, its text decoded across reads',
  )
  t.equal(stopped, 'ended', 'it stops at the end event')
})

t.test('a refused stream stops with the refusal; a busy one is tried again', async (t) => {
  const refused = await follow(connections([new Refused(404)]).open)
  t.match(refused.stopped, { status: 404 }, 'a 404 stops it')
  const busy = connections([new Refused(429), 'retry: 1\n\nevent: end\ndata: {"status":"timeout"}\n\n'])
  const retried = await follow(busy.open)
  t.equal(retried.stopped, 'ended', 'a 429 is retried')
  t.equal(busy.asked.length, 2)
})
