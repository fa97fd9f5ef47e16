import { setTimeout as delay } from 'node:timers/promises'
import type { SessionEvent, SessionStatus } from '../domain/session.js'
import { pendingTimer, type ConversationState, type KanbanAction, type TurnFunction } from '../domain/turn.js'
import type { RecordedCall } from '../domain/outside-call.js'
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import { failedTurnWebhookBody, turnWebhookBody, type WebhookBody } from './body.js'

const SESSION_STREAMS = ['session-']

/** What the engine did in a turn beyond what the webhook tells: for the editor's test panel. */
export interface TurnDebug {
  messageId: string
  /** Node ids in the order the turn visited them. */
  path: string[]
  /** Every variable after the turn, and the ones the turn set. */
  variables: ConversationState['variables']
  changed: ConversationState['variables']
  warnings: string[]
  functions: TurnFunction[]
  kanban: KanbanAction[]
  /** The node waiting after the turn (a question for a reply, a wait, a delay). */
  waitingAt: string | null
  /** Its pending timer, if any: when it is due. */
  timer: { nodeId: string; dueAt: string } | null
  status: SessionStatus
}

/** One event of a session as a live stream tells it. */
export interface FeedItem {
  position: Position
  /** The turn's webhook body; undefined when the turn told nothing (no webhook either). */
  turn?: WebhookBody
  debug?: TurnDebug
  /** Set when the event ended the session. */
  ended?: Exclude<SessionStatus, 'active'>
  /** A call outside a turn made, with its answer (for the test panel's debug view). */
  call?: RecordedCall & { messageId: string }
}

/** The feed item of a recorded session event; undefined for events that are not turns, calls or ends. */
export function feedItemOf(recorded: RecordedEvent): FeedItem | undefined {
  const event = recorded as unknown as SessionEvent
  switch (event.type) {
    case 'TurnCompleted': {
      const { sessionId, messageId, output } = event.data
      return {
        position: recorded.position,
        turn: turnWebhookBody(sessionId, messageId, output),
        debug: {
          messageId,
          path: output.visited ?? [],
          variables: output.state.variables,
          changed: output.variables,
          warnings: output.warnings,
          functions: output.functions,
          kanban: output.kanban,
          waitingAt: output.state.waitingAt?.nodeId ?? null,
          timer: pendingTimer(output.state.waitingAt),
          status: output.status,
        },
        ...(output.status === 'active' ? {} : { ended: output.status }),
      }
    }
    case 'TurnFailed':
      return { position: recorded.position, turn: failedTurnWebhookBody(event.data), ended: 'error' }
    case 'SessionExpired':
      return { position: recorded.position, ended: 'timeout' }
    case 'OutsideCallAnswered': {
      const { messageId, index, nodeId, request, answer, durationMs } = event.data
      return { position: recorded.position, call: { messageId, index, nodeId, request, answer, durationMs } }
    }
    default:
      return undefined
  }
}

export type FeedListener = (recorded: RecordedEvent) => void

/**
 * One live subscription to the session streams for the whole process, fanned out by session to the
 * open session streams: a thousand listeners cost one reader of the log's tail, not a query each.
 * It starts with the first listener and follows the log from its head then.
 */
export class TurnFeed {
  private readonly listeners = new Map<string, Set<FeedListener>>()
  private following?: Promise<void>
  private readonly stopping = new AbortController()

  private readonly store: EventStore
  private readonly logger: Pick<Logger, 'warn'>

  constructor(
    store: EventStore,
    logger: Pick<Logger, 'warn'>,
  ) {
    this.store = store
    this.logger = logger
  }

  /** How many listeners are attached now. */
  get size(): number {
    let n = 0
    for (const set of this.listeners.values()) n += set.size
    return n
  }

  /**
   * Calls `listener` with every event of the session recorded from now on. Resolves once the feed
   * follows the log: an event that the stream read after this does not hold reaches the listener.
   * Returns the function that detaches it.
   */
  async listen(sessionId: string, listener: FeedListener): Promise<() => void> {
    let set = this.listeners.get(sessionId)
    if (!set) this.listeners.set(sessionId, (set = new Set()))
    set.add(listener)
    const detach = () => {
      set.delete(listener)
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId)
    }
    try {
      await this.follow()
    } catch (error) {
      detach()
      throw error
    }
    return detach
  }

  private follow(): Promise<void> {
    this.following ??= this.store.headPosition({ streamPrefixes: SESSION_STREAMS }).then(
      (head) => {
        void this.run(head)
      },
      (error: unknown) => {
        this.following = undefined
        throw error
      },
    )
    return this.following
  }

  /** Follows the log from `from`; a lost subscription resumes after the last event handed out. */
  private async run(from: Position): Promise<void> {
    const signal = this.stopping.signal
    let position = from
    while (!signal.aborted) {
      try {
        for await (const batch of this.store.subscribeAll({ from: position, streamPrefixes: SESSION_STREAMS, signal, maxBatch: 500 })) {
          for (const recorded of batch.events) {
            const listeners = this.listeners.get(recorded.stream.slice('session-'.length))
            if (listeners) for (const listener of listeners) listener(recorded)
          }
          if (comparePositions(batch.through, position) > 0) position = batch.through
        }
      } catch (error) {
        if (signal.aborted) return
        this.logger.warn({ err: error }, 'the session streams lost their feed; following again')
        await delay(500)
      }
    }
  }

  close(): void {
    this.stopping.abort()
    this.listeners.clear()
  }
}
