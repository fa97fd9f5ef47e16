import type { DbOrTrx, DeliveryStatus } from '../store/database.js'

export interface DeliveryLink {
  id: string
  status: DeliveryStatus
}

/** The webhook deliveries of a session, by the id of each event they report (the outbox records it). */
export async function deliveriesByEvent(db: DbOrTrx, sessionId: string): Promise<Map<string, DeliveryLink>> {
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'event_ids']).where('session_id', '=', sessionId).execute()
  const links = new Map<string, DeliveryLink>()
  for (const row of rows) for (const eventId of row.event_ids) links.set(eventId, { id: row.id, status: row.status })
  return links
}
