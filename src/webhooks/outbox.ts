import { sql, type Insertable, type RawBuilder, type Transaction } from 'kysely'
import { CARD_STREAM_PREFIX, type CardEvent } from '../domain/card.js'
import { sessionStream, type SessionEvent } from '../domain/session.js'
import { comparePositions, type Position, type RecordedEvent } from '../eventstore/port.js'
import { ALWAYS, ROWS_PER_STATEMENT, WritesInOrder, defineProjection, inChunks, type TypedFold } from '../projections/projection.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { WebhookSessionsTable } from '../store/tables/webhook-sessions.js'
import { deliveryIdOf, insertDeliveries, type NewDelivery } from './deliveries.js'
import { cardWebhookBody, failedTurnWebhookBody, turnWebhookBody, type WebhookBody } from './body.js'

/** Card events the engine wrote while carrying out a turn: the turn's own webhook reports them. */
const ENGINE_ACTOR = 'engine'

const delivery = (recorded: RecordedEvent, body: WebhookBody, at: string): NewDelivery => ({
  id: deliveryIdOf(recorded.id),
  session_id: body.sessionId,
  message_id: body.messageId,
  body: JSON.stringify(body),
  event_ids: [recorded.id],
  source_commit: String(recorded.position.commit),
  source_prepare: String(recorded.position.prepare),
  created_at: at,
})

type NewRoute = Insertable<WebhookSessionsTable>

/**
 * A card event parks and waits with the session it reports to: while the session's stream is
 * parked, its webhook must not overtake the session's held turns.
 */
const parksWithItsSession = (recorded: RecordedEvent): string => {
  const sessionId = recorded.stream.startsWith(CARD_STREAM_PREFIX) ? (recorded.data as { sessionId?: unknown }).sessionId : undefined
  return typeof sessionId === 'string' ? sessionStream(sessionId) : recorded.stream
}

/** Where a session's webhooks go; a preview has no route, so its turns make no delivery at all. */
const routeOf = (d: Extract<SessionEvent, { type: 'SessionStarted' }>['data']): NewRoute | undefined =>
  d.preview || d.apiKeyId === null
    ? undefined
    : { session_id: d.sessionId, organization_id: d.organizationId, workspace_id: d.workspaceId, api_key_id: d.apiKeyId, callback_url: d.callbackUrl, active: true }

/** Stores routes; a route stored already (a replay) keeps what it holds, but closes if these writes closed it. */
const insertRoutes = (routes: readonly NewRoute[], onlyIf: RawBuilder<boolean>) => sql`
  insert into webhook_sessions (session_id, organization_id, workspace_id, api_key_id, callback_url, active)
  select v.session_id, v.organization_id, v.workspace_id, v.api_key_id, v.callback_url, v.active
  from jsonb_to_recordset(cast(${JSON.stringify(routes)} as jsonb))
    as v(session_id uuid, organization_id uuid, workspace_id uuid, api_key_id uuid, callback_url text, active boolean)
  where ${onlyIf}
  on conflict (session_id) do update set active = webhook_sessions.active and excluded.active`

/** A card event's webhook goes out only while its session's route is active. */
const ROUTE_IS_ACTIVE = sql<boolean>`r.active`

const insertCardDelivery = async (trx: Transaction<Database>, card: NewDelivery): Promise<void> => {
  await insertDeliveries([card], ROUTE_IS_ACTIVE).execute(trx)
}

const closeRoutes = (sessionIds: readonly string[], onlyIf: RawBuilder<boolean>) => sql`
  update webhook_sessions set active = false where session_id = any(${sessionIds}::uuid[]) and ${onlyIf}`

/**
 * The routes, turn deliveries and finished sessions of a run of merged events, written in three
 * statements. A session that starts and finishes within the run gets its route closed from the start.
 */
class OutboxWrites {
  readonly routes = new Map<string, NewRoute>()
  readonly turns: NewDelivery[] = []
  readonly finished = new Set<string>()

  get rowsHeld(): number {
    return this.routes.size + this.turns.length + this.finished.size
  }

  finish(sessionId: string): void {
    const route = this.routes.get(sessionId)
    if (route) route.active = false
    else this.finished.add(sessionId)
  }

  /** Routes first (the turns' deliveries are made on them), the finished sessions' routes closed last. */
  async write(trx: Transaction<Database>): Promise<void> {
    await inChunks([...this.routes.values()], ROWS_PER_STATEMENT, (routes) => insertRoutes(routes, ALWAYS).execute(trx))
    await inChunks(this.turns, ROWS_PER_STATEMENT, (turns) => insertDeliveries(turns, ALWAYS).execute(trx))
    await inChunks(this.finished, ROWS_PER_STATEMENT, (ids) => closeRoutes(ids, ALWAYS).execute(trx))
  }

  /**
   * The same three writes as parts of one statement. The parts all see the tables as they were
   * before it, so a turn on a route new in this run needs them written in turn.
   */
  inOneStatement(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined {
    if (Math.max(this.routes.size, this.turns.length, this.finished.size) > ROWS_PER_STATEMENT) return undefined
    if (this.turns.some((turn) => this.routes.has(turn.session_id))) return undefined
    return [
      ...(this.routes.size > 0 ? [insertRoutes([...this.routes.values()], checkpointMoved)] : []),
      ...(this.turns.length > 0 ? [insertDeliveries(this.turns, checkpointMoved, true)] : []),
      ...(this.finished.size > 0 ? [closeRoutes([...this.finished], checkpointMoved)] : []),
    ]
  }
}

/**
 * The outbox's events in order. Starts, turns and expiries, the bulk of a busy outbox, are
 * written together; a card event that reports to a session ends a run of them, as it reads whether the
 * session is still active, and is written in its place.
 *
 * A rebuild's replay makes no delivery again for the events the outbox applied before it: their
 * rows survive the rebuild (each was written with the checkpoint that passed its event), and one
 * deleted since must not be sent again.
 */
class OutboxFold implements TypedFold<SessionEvent | CardEvent> {
  private readonly inOrder = new WritesInOrder(() => new OutboxWrites(), insertCardDelivery)

  private readonly appliedBefore: Position | undefined

  constructor(appliedBefore: Position | undefined) {
    this.appliedBefore = appliedBefore
  }

  get rowsHeld(): number {
    return this.inOrder.rowsHeld
  }

  private merging(): OutboxWrites {
    return this.inOrder.merging()
  }

  private deliveredBefore(recorded: RecordedEvent): boolean {
    return this.appliedBefore !== undefined && comparePositions(recorded.position, this.appliedBefore) <= 0
  }

  async add(_db: DbOrTrx, events: readonly { event: SessionEvent | CardEvent; recorded: RecordedEvent }[]): Promise<void> {
    for (const { event, recorded } of events) {
      switch (event.type) {
        case 'MessageReceived':
        case 'OutsideEventReceived':
        case 'TimerFired':
          break
        case 'SessionStarted': {
          const { routes } = this.merging()
          const route = routeOf(event.data)
          if (route && !routes.has(route.session_id)) routes.set(route.session_id, route)
          break
        }
        case 'TurnCompleted': {
          const { sessionId, messageId, output, completedAt } = event.data
          const body = this.deliveredBefore(recorded) ? undefined : turnWebhookBody(sessionId, messageId, output)
          if (body) this.merging().turns.push(delivery(recorded, body, completedAt))
          if (output.status !== 'active') this.merging().finish(sessionId)
          break
        }
        case 'TurnFailed': {
          const { sessionId, failedAt } = event.data
          if (!this.deliveredBefore(recorded)) this.merging().turns.push(delivery(recorded, failedTurnWebhookBody(event.data), failedAt))
          this.merging().finish(sessionId)
          break
        }
        case 'SessionExpired':
          this.merging().finish(event.data.sessionId)
          break
        case 'OutsideCallAnswered':
          // What a call answered reaches the callback through the turn it belongs to.
          break
        default: {
          // A card event reports to its session's webhook when the API made it on a session's card.
          const { sessionId } = event.data
          if (sessionId !== null && recorded.metadata.actor !== ENGINE_ACTOR && !this.deliveredBefore(recorded)) {
            this.inOrder.addInPlace(delivery(recorded, cardWebhookBody(sessionId, recorded.id, event), recorded.createdAt))
          }
        }
      }
    }
  }

  write(trx: Transaction<Database>): Promise<void> {
    return this.inOrder.write(trx)
  }

  inOneStatement(checkpointMoved: RawBuilder<boolean>): RawBuilder<unknown>[] | undefined {
    return this.inOrder.inOneStatement(checkpointMoved)
  }
}

/**
 * The webhook outbox: one row per webhook, written in the transaction that moves its checkpoint,
 * so each turn's webhook exists exactly once whatever crashes. A session's route (its key and the
 * callback as it was at start) is kept beside it. Only that route table is rebuilt; delivery rows
 * survive a rebuild and are not sent again.
 */
export const webhookOutboxProjection = defineProjection<SessionEvent | CardEvent>({
  name: 'webhook-outbox',
  streamPrefixes: ['session-', 'card-'],
  tables: ['webhook_sessions'],
  fold: ({ appliedBefore }) => new OutboxFold(appliedBefore),
  // An inbound message makes no webhook (its turn does): a send need not wait for this projection.
  eventTypes: ['SessionStarted', 'TurnCompleted', 'TurnFailed', 'SessionExpired', 'CardCreated', 'CardUpdated', 'CardStageChanged', 'CardDeleted'],
  onWebhookPath: true,
  parksWith: parksWithItsSession,
})
