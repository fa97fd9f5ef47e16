import { sql } from 'kysely'
import type { CardEvent } from '../domain/card.js'
import { defineProjection } from './projection.js'

/**
 * Analytics of the kanban (docs/analytics.md): each stay of a card in a stage, from the event that
 * put it there (its revision keys the stay) to the move or deletion that ended it.
 */
export const analyticsCardStaysProjection = defineProjection<CardEvent>({
  name: 'analytics-card-stays',
  streamPrefixes: ['card-'],
  tables: ['analytics_card_stays'],
  eventTypes: ['CardCreated', 'CardStageChanged', 'CardDeleted'],
  async apply(trx, event, recorded) {
    switch (event.type) {
      case 'CardCreated': {
        const d = event.data
        await trx
          .insertInto('analytics_card_stays')
          .values({
            card_id: d.cardId,
            entered_revision: String(recorded.revision),
            pipeline_id: d.pipelineId,
            workspace_id: d.workspaceId,
            stage_id: d.stageId,
            entered_at: d.createdAt,
            left_at: null,
            left_by: null,
          })
          .onConflict((oc) => oc.columns(['card_id', 'entered_revision']).doNothing())
          .execute()
        break
      }
      case 'CardStageChanged': {
        const d = event.data
        await trx
          .updateTable('analytics_card_stays')
          .set({ left_at: d.movedAt, left_by: 'moved' })
          .where('card_id', '=', d.cardId)
          .where('left_at', 'is', null)
          .execute()
        // The workspace is the card's, as its first stay recorded it.
        await sql`
          insert into analytics_card_stays (card_id, entered_revision, pipeline_id, workspace_id, stage_id, entered_at)
          select ${d.cardId}::uuid, ${String(recorded.revision)}::bigint, ${d.pipelineId}::uuid, workspace_id, ${d.stageId}::uuid, ${d.movedAt}::timestamptz
          from analytics_card_stays where card_id = ${d.cardId}
          order by entered_revision limit 1
          on conflict (card_id, entered_revision) do nothing`.execute(trx)
        break
      }
      case 'CardDeleted':
        await trx
          .updateTable('analytics_card_stays')
          .set({ left_at: event.data.deletedAt, left_by: 'deleted' })
          .where('card_id', '=', event.data.cardId)
          .where('left_at', 'is', null)
          .execute()
        break
    }
  },
})
