import { sql, type Transaction } from 'kysely'
import type { CardEvent } from '../domain/card.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { Database, DbOrTrx } from '../store/database.js'
import { ROWS_PER_STATEMENT, defineProjection, inChunks, type TypedFold } from './projection.js'

interface Stay {
  card_id: string
  entered_revision: string
  pipeline_id: string
  workspace_id: string | null
  stage_id: string
  entered_at: string
  left_at: string | null
  left_by: string | null
}

type Leaving = { left_at: string; left_by: 'moved' | 'deleted' }

/**
 * Stays folded in memory: the stays the events open, closed when a later event ends them, and for
 * each card whose open stay is stored, how the events end that stay.
 */
class StaysFold implements TypedFold<CardEvent> {
  private readonly opened: Stay[] = []
  /** Per card, the first stay the fold opened: it holds the card's workspace. */
  private readonly firstHere = new Map<string, Stay>()
  /** Per card, its stay that is open after the events so far, when the fold opened it. */
  private readonly openHere = new Map<string, Stay>()
  private readonly closeStored = new Map<string, Leaving>()

  get rowsHeld(): number {
    return this.opened.length + this.closeStored.size
  }

  async add(_db: DbOrTrx, events: readonly { event: CardEvent; recorded: RecordedEvent }[]): Promise<void> {
    for (const { event, recorded } of events) this.addOne(event, recorded.revision)
  }

  private addOne(event: CardEvent, revision: bigint): void {
    switch (event.type) {
      case 'CardCreated': {
        const d = event.data
        this.open({ card_id: d.cardId, entered_revision: String(revision), pipeline_id: d.pipelineId, workspace_id: d.workspaceId, stage_id: d.stageId, entered_at: d.createdAt, left_at: null, left_by: null })
        break
      }
      case 'CardStageChanged': {
        const d = event.data
        this.leave(d.cardId, { left_at: d.movedAt, left_by: 'moved' })
        // The workspace is the card's, as its first stay recorded it: null until write() reads it.
        const workspace = this.firstHere.get(d.cardId)?.workspace_id ?? null
        this.open({ card_id: d.cardId, entered_revision: String(revision), pipeline_id: d.pipelineId, workspace_id: workspace, stage_id: d.stageId, entered_at: d.movedAt, left_at: null, left_by: null })
        break
      }
      case 'CardDeleted':
        this.leave(event.data.cardId, { left_at: event.data.deletedAt, left_by: 'deleted' })
        break
    }
  }

  private open(stay: Stay): void {
    this.opened.push(stay)
    if (!this.firstHere.has(stay.card_id)) this.firstHere.set(stay.card_id, stay)
    this.openHere.set(stay.card_id, stay)
  }

  private leave(cardId: string, leaving: Leaving): void {
    const stay = this.openHere.get(cardId)
    if (stay) {
      Object.assign(stay, leaving)
      this.openHere.delete(cardId)
    } else if (!this.firstHere.has(cardId)) this.closeStored.set(cardId, leaving)
  }

  /** Closes the stored stays first: the batch's own stays must not be taken for them. */
  async write(trx: Transaction<Database>): Promise<void> {
    const closing = [...this.closeStored].map(([card_id, leaving]) => ({ card_id, ...leaving }))
    await inChunks(closing, ROWS_PER_STATEMENT, (rows) =>
      sql`
        update analytics_card_stays as s set left_at = v.left_at, left_by = v.left_by
        from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb)) as v(card_id uuid, left_at timestamptz, left_by text)
        where s.card_id = v.card_id and s.left_at is null`.execute(trx),
    )
    // Stays of cards first seen before the fold take the workspace of the card's first stored stay;
    // a card with none (its creation never recorded) gets no stay.
    await inChunks(this.opened, ROWS_PER_STATEMENT, (rows) => sql`
      insert into analytics_card_stays (card_id, entered_revision, pipeline_id, workspace_id, stage_id, entered_at, left_at, left_by)
      select v.card_id, v.entered_revision, v.pipeline_id, coalesce(v.workspace_id, first.workspace_id), v.stage_id, v.entered_at, v.left_at, v.left_by
      from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
        as v(card_id uuid, entered_revision bigint, pipeline_id uuid, workspace_id uuid, stage_id uuid, entered_at timestamptz, left_at timestamptz, left_by text)
      left join lateral (
        select workspace_id from analytics_card_stays s where s.card_id = v.card_id order by entered_revision limit 1
      ) as first on v.workspace_id is null
      where coalesce(v.workspace_id, first.workspace_id) is not null
      on conflict (card_id, entered_revision) do nothing`.execute(trx))
  }
}

/**
 * Analytics of the kanban (docs/analytics.md): each stay of a card in a stage, from the event that
 * put it there (its revision keys the stay) to the move or deletion that ended it.
 */
export const analyticsCardStaysProjection = defineProjection<CardEvent>({
  name: 'analytics-card-stays',
  streamPrefixes: ['card-'],
  tables: ['analytics_card_stays'],
  eventTypes: ['CardCreated', 'CardStageChanged', 'CardDeleted'],
  fold: () => new StaysFold(),
})
