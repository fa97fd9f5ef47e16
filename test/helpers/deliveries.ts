import { randomUUID } from 'node:crypto'
import type { Insertable } from 'kysely'
import type { WebhookDeliveriesTable } from '../../src/store/tables/webhook-deliveries.js'

type DeliveryRow = Insertable<WebhookDeliveriesTable>

/**
 * A `webhook_deliveries` row as the outbox writes one: pending, of a session, workspace and
 * organization of its own, to example.test, unless `fields` say otherwise. Its place in its
 * session's order is `source_prepare`.
 */
export const pendingDelivery = (fields: Pick<DeliveryRow, 'source_prepare' | 'created_at'> & Partial<DeliveryRow>): DeliveryRow => ({
  id: randomUUID(),
  organization_id: randomUUID(),
  workspace_id: randomUUID(),
  session_id: randomUUID(),
  message_id: randomUUID(),
  api_key_id: randomUUID(),
  callback_url: 'https://example.test/hook',
  body: '{}',
  event_ids: JSON.stringify([randomUUID()]),
  source_commit: '1',
  status: 'pending',
  ...fields,
})
