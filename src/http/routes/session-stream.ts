import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ServerResponse } from 'node:http'
import { readSessionHistory } from '../../audit/session-history.js'
import { AppError, BadRequestError, NotFoundError } from '../../errors.js'
import { comparePositions, positionToString, type Position, type RecordedEvent } from '../../eventstore/port.js'
import { TurnFeed, feedItemOf, type FeedItem } from '../../webhooks/turn-feed.js'
import type { AppDeps } from '../app.js'
import { Uuid, errorResponses } from '../schemas.js'
import { openApiTag } from './sessions.js'

export { openApiTag }

/** `Last-Event-ID`: the position of the last turn the client saw, as the stream wrote it. */
const LAST_EVENT_ID = /^(\d{1,20})\/(\d{1,20})$/

/** A client that stops reading is let go past this much unsent output; it resumes with Last-Event-ID. */
const MAX_UNSENT_BYTES = 1024 * 1024

const parseLastEventId = (raw: string | undefined): Position | undefined => {
  if (raw === undefined) return undefined
  const match = LAST_EVENT_ID.exec(raw.trim())
  if (!match) throw new BadRequestError('Last-Event-ID must be the id of an event of this stream, such as 123/456')
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) }
}

/** One frame of the stream; `data` is JSON on one line (JSON escapes line breaks in strings). */
const frame = (event: string, data: unknown, id?: string): string => `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`

/**
 * The frames of one feed item. The `turn` frame carries the item's position as its id; a `debug`
 * frame goes before it without one, so a client resuming after a turn gets neither again. A turn
 * that told nothing (no webhook) has no `turn` frame: its debug frame then carries the id.
 */
function framesOf(item: FeedItem, debug: boolean): string {
  const id = positionToString(item.position)
  let out = ''
  if (debug && item.call) out += frame('call', item.call, id)
  if (debug && item.debug) out += frame('debug', item.debug, item.turn ? undefined : id)
  if (item.turn) out += frame('turn', item.turn, id)
  if (item.ended) out += frame('end', { status: item.ended }, item.turn || (debug && item.debug) ? undefined : id)
  return out
}

/**
 * `GET /v1/sessions/{id}/stream`: the session's turns as Server-Sent Events, each `turn` event's
 * data exactly the webhook body of that turn. Turns already recorded come first, then live ones from
 * the process's one feed of the log; `Last-Event-ID` resumes after a turn, missing nothing and
 * repeating nothing. It ends with the session.
 */
export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const feed = new TurnFeed(deps.store, deps.logger)
    const openByWorkspace = new Map<string, number>()
    const open = new Set<ServerResponse>()
    const heartbeatMs = deps.config.streamHeartbeatSeconds * 1000

    // Before the server closes: it waits for open connections, and a stream stays open until ended.
    app.addHook('preClose', async () => {
      feed.close()
      for (const response of open) response.end()
    })

    app.get(
      '/sessions/:sessionId/stream',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'streamSession',
          summary: "Follow a session's turns live (Server-Sent Events)",
          description: [
            'A `text/event-stream`: one `turn` event per turn, its data exactly the webhook body the turn made (same `messageId`, `changes`), its `id` the turn\'s position in the log.',
            'Turns recorded before the request come first, then live ones. Send `Last-Event-ID` (browsers do when they reconnect) to resume after that turn.',
            'An `end` event (`{status}`) closes the stream when the session ends: at once for a session that has ended already.',
            'While an AI step replies, `text` events (`{messageId, nodeId, text}`, no `id`) carry its text piece by piece as the model generates it; the `turn` event then carries the whole message, as the webhook does.',
            'Comments (`: keep-alive`) keep an idle stream open through proxies. With `debug=true`, a `debug` event before each turn tells the path of nodes, the variables, warnings, transfers and kanban actions, and a `call` event tells each call outside a turn made (an httpRequest node: the request as sent with secrets redacted, the answer, the duration).',
            'The editor\'s token reaches preview sessions of its workspace.',
          ].join(' '),
          params: Type.Object({ sessionId: Uuid }),
          querystring: Type.Object({ debug: Type.Optional(Type.Boolean({ default: false, description: 'add a `debug` event before each turn' })) }),
          headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'the `id` of the last event seen: the stream resumes after it' })) }),
          response: {
            200: { description: 'the session\'s events as Server-Sent Events', content: { 'text/event-stream': { schema: Type.String() } } },
            ...errorResponses(400, 401, 403, 404, 429),
          },
        },
        config: { editor: true },
      },
      async (request, reply) => {
        const { sessionId } = request.params
        const { workspaceId } = request.principal
        const after = parseLastEventId(request.headers['last-event-id'])
        const debug = request.query.debug === true
        if ((openByWorkspace.get(workspaceId) ?? 0) >= deps.config.streamsPerWorkspace) {
          throw new AppError(429, `This workspace has ${deps.config.streamsPerWorkspace} session streams open; close one first`)
        }

        // Listen before reading the stream: what the read does not hold, the feed brings.
        const live: RecordedEvent[] = []
        let deliver: (recorded: RecordedEvent) => void = (recorded) => void live.push(recorded)
        const detach = await feed.listen(sessionId, (recorded) => deliver(recorded))
        let history
        try {
          history = await readSessionHistory(deps.store, workspaceId, sessionId)
          if (request.principal.kind === 'editor' && history.state.previewDefinition === null) throw new NotFoundError(`session ${sessionId} not found`)
        } catch (error) {
          detach()
          throw error
        }

        const response = reply.raw
        reply.hijack()
        response.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          'x-accel-buffering': 'no',
          // The connection was the stream's alone: it closes with it, and a server shutting down does not wait for it.
          connection: 'close',
          'x-request-id': request.id,
        })
        open.add(response)
        deps.metrics?.sessionStreamsOpen.inc()
        openByWorkspace.set(workspaceId, (openByWorkspace.get(workspaceId) ?? 0) + 1)
        const heartbeat = setInterval(() => response.write(': keep-alive\n\n'), heartbeatMs)
        heartbeat.unref()
        let closed = false
        let stopPieces = () => {}
        const close = () => {
          if (closed) return
          closed = true
          clearInterval(heartbeat)
          detach()
          stopPieces()
          open.delete(response)
          deps.metrics?.sessionStreamsOpen.dec()
          const left = (openByWorkspace.get(workspaceId) ?? 1) - 1
          if (left > 0) openByWorkspace.set(workspaceId, left)
          else openByWorkspace.delete(workspaceId)
          response.end()
        }
        response.on('close', close)

        let sent = after
        const send = (recorded: RecordedEvent) => {
          if (closed || (sent && comparePositions(recorded.position, sent) <= 0)) return
          const item = feedItemOf(recorded)
          if (!item) return
          sent = item.position
          response.write(framesOf(item, debug))
          if (item.ended || response.writableLength > MAX_UNSENT_BYTES) close()
        }
        response.write(`retry: 2000\n\n`)
        for (const recorded of history.recorded) send(recorded)
        for (const recorded of live) send(recorded)
        deliver = send
        // Pieces of replies being generated: a view of the moment, without an id, never replayed.
        if (!closed && deps.generatedText) {
          const stop = await deps.generatedText.listen(sessionId, ({ messageId, nodeId, text }) => {
            if (!closed) response.write(frame('text', { messageId, nodeId, text }))
          })
          if (closed) stop()
          else stopPieces = stop
        }
        // A session that ended before `after` has nothing left to tell: it ends at once.
        if (!closed && history.state.status !== 'active') {
          response.write(frame('end', { status: history.state.status }))
          close()
        }
      },
    )
  }
