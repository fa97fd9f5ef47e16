import type { ReplayEvent } from '../domain/replay.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type Paging } from './paging.js'
import { toIso } from './timestamps.js'

/** Keeps `flow_replays`: the flows projection applies the replays of its flows (one read model, one connection of the projector's pool). */
export async function applyReplayEvent(trx: DbOrTrx, event: ReplayEvent): Promise<void> {
  switch (event.type) {
    case 'ReplayRequested':
      await trx
        .insertInto('flow_replays')
        .values({
          replay_id: event.data.replayId,
          flow_id: event.data.flowId,
          workspace_id: event.data.workspaceId,
          organization_id: event.data.organizationId,
          version: event.data.version,
          draft_version: event.data.draftVersion,
          status: 'running',
          total: event.data.sessionIds.length,
          checked: 0,
          differing: 0,
          requested_at: event.data.requestedAt,
        })
        .onConflict((oc) => oc.column('replay_id').doNothing())
        .execute()
      break
    case 'ReplayProgressed': {
      const found = event.data.differing.length + (event.data.pastKept ?? 0)
      // A batch applies once: its `from` is where the replay stood before it.
      await trx
        .updateTable('flow_replays')
        .set((eb) => ({ checked: event.data.checked, differing: eb('differing', '+', found) }))
        .where('replay_id', '=', event.data.replayId)
        .where('checked', '=', event.data.from)
        .execute()
      break
    }
    case 'ReplayFinished':
      await trx.updateTable('flow_replays').set({ status: 'finished', finished_at: event.data.finishedAt }).where('replay_id', '=', event.data.replayId).execute()
      break
  }
}

export interface ReplaySummary {
  id: string
  version: number
  draftVersion: number
  status: 'running' | 'finished'
  total: number
  checked: number
  differingCount: number
  requestedAt: string
  finishedAt: string | null
}

/** A flow's replays, newest first. */
export async function listReplays(db: DbOrTrx, query: Paging & { workspaceId: string; flowId: string }) {
  const matching = db.selectFrom('flow_replays').where('workspace_id', '=', query.workspaceId).where('flow_id', '=', query.flowId)
  const ordered = matching.selectAll().orderBy('requested_at', 'desc').orderBy('replay_id', 'desc')
  return listPage({ matching, ordered }, query, (row): ReplaySummary => ({
    id: row.replay_id,
    version: row.version,
    draftVersion: row.draft_version,
    status: row.status,
    total: row.total,
    checked: row.checked,
    differingCount: row.differing,
    requestedAt: toIso(row.requested_at),
    finishedAt: row.finished_at === null ? null : toIso(row.finished_at),
  }))
}

/** Replays of the organization not yet finished. */
export async function unfinishedReplays(db: DbOrTrx, organizationId: string): Promise<number> {
  const row = await db.selectFrom('flow_replays').select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', organizationId).where('status', '=', 'running').executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The replay each organization waits on first (its oldest unfinished), oldest first: one per tenant runs at a time. */
export async function nextReplays(db: DbOrTrx, limit: number): Promise<{ replayId: string; organizationId: string }[]> {
  const rows = await db
    .selectFrom('flow_replays')
    .select(['replay_id', 'organization_id', 'requested_at'])
    .distinctOn('organization_id')
    .where('status', '=', 'running')
    .orderBy('organization_id')
    .orderBy('requested_at')
    .orderBy('replay_id')
    .execute()
  return rows
    .sort((a, b) => new Date(a.requested_at).getTime() - new Date(b.requested_at).getTime())
    .slice(0, limit)
    .map((row) => ({ replayId: row.replay_id, organizationId: row.organization_id }))
}
