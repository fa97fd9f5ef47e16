import type { Selectable, Transaction } from 'kysely'
import { v5 as uuidV5 } from 'uuid'
import type { CardEvent } from '../domain/card.js'
import type { SessionEvent } from '../domain/session.js'
import type { RecordedEvent } from '../eventstore/port.js'
import { defineProjection } from '../projections/projection.js'
import type { Database, WebhookSessionsTable } from '../store/database.js'
import { cardWebhookBody, turnWebhookBody, type WebhookBody } from './body.js'

// A delivery's id (its `webhook-id`) is derived from the event it reports, so a replay of the
// same event finds the row already there.
const DELIVERY_ID_NAMESPACE = 'b8e0f3d6-3f57-4f55-9d0e-5f4a53c1a7e2'
export const deliveryIdOf = (eventId: string): string => uuidV5(eventId, DELIVERY_ID_NAMESPACE)

/** Card events the engine wrote while carrying out a turn: the turn's own webhook reports them. */
const ENGINE_ACTOR = 'engine'

type Route = Selectable<WebhookSessionsTable>

const findRoute = (trx: Transaction<Database>, sessionId: string): Promise<Route | undefined> =>
  trx.selectFrom('webhook_sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirst()

async function enqueue(trx: Transaction<Database>, recorded: RecordedEvent, route: Route, body: WebhookBody, at: string): Promise<void> {
  await trx
    .insertInto('webhook_deliveries')
    .values({
      id: deliveryIdOf(recorded.id),
      organization_id: route.organization_id,
      workspace_id: route.workspace_id,
      session_id: route.session_id,
      message_id: body.messageId,
      api_key_id: route.api_key_id,
      callback_url: route.callback_url,
      body: JSON.stringify(body),
      event_ids: JSON.stringify([recorded.id]),
      source_commit: String(recorded.position.commit),
      source_prepare: String(recorded.position.prepare),
      status: route.callback_url === null ? 'skipped' : 'pending',
      next_attempt_at: null,
      lease_token: null,
      lease_until: null,
      last_error: null,
      delivered_at: null,
      created_at: at,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
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
  // An inbound message makes no webhook (its turn does): a send need not wait for this projection.
  eventTypes: ['SessionStarted', 'TurnCompleted', 'SessionExpired', 'CardCreated', 'CardUpdated', 'CardStageChanged', 'CardDeleted'],
  async apply(trx, event, recorded) {
    switch (event.type) {
      case 'SessionStarted': {
        const d = event.data
        await trx
          .insertInto('webhook_sessions')
          .values({ session_id: d.sessionId, organization_id: d.organizationId, workspace_id: d.workspaceId, api_key_id: d.apiKeyId, callback_url: d.callbackUrl, active: true })
          .onConflict((oc) => oc.column('session_id').doNothing())
          .execute()
        break
      }
      case 'TurnCompleted': {
        const { sessionId, messageId, output, completedAt } = event.data
        const body = turnWebhookBody(sessionId, messageId, output)
        const route = body && (await findRoute(trx, sessionId))
        if (body && route) await enqueue(trx, recorded, route, body, completedAt)
        if (output.status !== 'active') await trx.updateTable('webhook_sessions').set({ active: false }).where('session_id', '=', sessionId).execute()
        break
      }
      case 'SessionExpired':
        await trx.updateTable('webhook_sessions').set({ active: false }).where('session_id', '=', event.data.sessionId).execute()
        break
      case 'CardCreated':
      case 'CardUpdated':
      case 'CardStageChanged':
      case 'CardDeleted': {
        const { sessionId } = event.data
        if (sessionId === null || recorded.metadata.actor === ENGINE_ACTOR) break
        const route = await findRoute(trx, sessionId)
        if (route?.active) await enqueue(trx, recorded, route, cardWebhookBody(sessionId, recorded.id, event), recorded.createdAt)
        break
      }
    }
  },
})
