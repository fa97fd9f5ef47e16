import { sql } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import { invalidReplyWarning, type TurnOutput } from '../engine/turn.js'
import type { DbOrTrx } from '../store/database.js'
import { defineProjection } from './projection.js'

/**
 * The question a reply turn answered: a reply turn starts at the question it replies to, and the
 * interpreter records `invalidReplyWarning` for every reply the question did not accept.
 */
function acceptedReplyAt(output: TurnOutput): string | null {
  const first = output.visited?.[0]
  if (first === undefined) return null
  return output.warnings.includes(invalidReplyWarning(first)) ? null : first
}

/** How many times the turn visited each node, in the order it first reached them. */
function visitCounts(visited: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const nodeId of visited) counts.set(nodeId, (counts.get(nodeId) ?? 0) + 1)
  return counts
}

/**
 * Analytics of sessions (docs/analytics.md): each session once, with its status, duration and the
 * last node it reached, and each node it reached with its visits and whether a reply there was
 * accepted. Nodes come from the turns' `visited` paths: a turn recorded without one adds none.
 */
export const analyticsSessionsProjection = defineProjection<SessionEvent>({
  name: 'analytics-sessions',
  streamPrefixes: ['session-'],
  tables: ['analytics_sessions', 'analytics_session_nodes'],
  eventTypes: ['SessionStarted', 'TurnCompleted', 'SessionExpired'],
  async apply(trx, event) {
    switch (event.type) {
      case 'SessionStarted': {
        const d = event.data
        await trx
          .insertInto('analytics_sessions')
          .values({
            session_id: d.sessionId,
            organization_id: d.organizationId,
            workspace_id: d.workspaceId,
            flow_id: d.flowId,
            flow_version: d.flowVersion,
            status: 'running',
            started_at: d.startedAt,
            finished_at: null,
            last_node_id: null,
            turns: 0,
          })
          .onConflict((oc) => oc.column('session_id').doNothing())
          .execute()
        break
      }
      case 'TurnCompleted': {
        const { sessionId, output, completedAt } = event.data
        const visited = output.visited ?? []
        const counts = visitCounts(visited)
        if (counts.size > 0) {
          // The session's first turn answers its start; only a later one can answer a question.
          await sql`
            insert into analytics_session_nodes as n
              (session_id, node_id, flow_id, flow_version, workspace_id, session_started_at, first_reached_at, visits, answered_at)
            select s.session_id, v.node_id, s.flow_id, s.flow_version, s.workspace_id, s.started_at, ${completedAt}::timestamptz, v.visits,
                   case when s.turns > 0 and v.node_id = ${acceptedReplyAt(output)} then ${completedAt}::timestamptz end
            from analytics_sessions s
            cross join unnest(${[...counts.keys()]}::text[], ${[...counts.values()]}::integer[]) as v(node_id, visits)
            where s.session_id = ${sessionId}
            on conflict (session_id, node_id) do update set
              visits = n.visits + excluded.visits,
              answered_at = coalesce(n.answered_at, excluded.answered_at)`.execute(trx)
        }
        const finished = output.status !== 'active'
        await trx
          .updateTable('analytics_sessions')
          .set({
            turns: sql`turns + 1`,
            last_node_id: sql`coalesce(${visited.at(-1) ?? null}::text, last_node_id)`,
            ...(finished ? { status: output.status, finished_at: completedAt } : {}),
          })
          .where('session_id', '=', sessionId)
          .where('status', '=', 'running')
          .execute()
        break
      }
      case 'SessionExpired':
        await trx
          .updateTable('analytics_sessions')
          .set({ status: 'timeout', finished_at: event.data.expiredAt })
          .where('session_id', '=', event.data.sessionId)
          .where('status', '=', 'running')
          .execute()
        break
    }
  },
})

export interface NodeAnalytics {
  nodeId: string
  type: string
  reached: number
  answered: number
  endedHere: number
  waitingHere: number
  droppedOff: number
  failedHere: number
  completedHere: number
}

export interface FlowVersionAnalytics {
  sessions: { total: number; running: number; completed: number; timeout: number; error: number }
  nodes: NodeAnalytics[]
}

/**
 * Per node of one flow version, over its sessions started since `startedSince` (all without it): how
 * many reached the node, had a reply accepted there, and ended there, by how their session stands.
 * Every node of `definitionNodes` is listed, in its order, the ones no session reached with zeros.
 */
export async function flowVersionAnalytics(
  db: DbOrTrx,
  query: { flowId: string; version: number; startedSince?: Date; definitionNodes: readonly { id: string; type: string }[] },
): Promise<FlowVersionAnalytics> {
  const since = query.startedSince ?? null
  const [statuses, visits] = await Promise.all([
    sql<{ status: string; n: number }>`
      select status, count(*)::integer as n from analytics_sessions
      where flow_id = ${query.flowId} and flow_version = ${query.version} and (${since}::timestamptz is null or started_at >= ${since}::timestamptz)
      group by status`.execute(db),
    sql<{ node_id: string; reached: number; answered: number; ended: number; waiting: number; dropped: number; failed: number; completed: number }>`
      select n.node_id, count(*)::integer as reached, count(n.answered_at)::integer as answered,
             count(*) filter (where ended)::integer as ended,
             count(*) filter (where ended and s.status = 'running')::integer as waiting,
             count(*) filter (where ended and s.status = 'timeout')::integer as dropped,
             count(*) filter (where ended and s.status = 'error')::integer as failed,
             count(*) filter (where ended and s.status = 'completed')::integer as completed
      from analytics_session_nodes n
      join analytics_sessions s on s.session_id = n.session_id
      cross join lateral (select s.last_node_id = n.node_id as ended) as e
      where n.flow_id = ${query.flowId} and n.flow_version = ${query.version} and (${since}::timestamptz is null or n.session_started_at >= ${since}::timestamptz)
      group by n.node_id`.execute(db),
  ])
  const byStatus = new Map(statuses.rows.map((row) => [row.status, Number(row.n)]))
  const byNode = new Map(visits.rows.map((row) => [row.node_id, row]))
  const nodeOf = ({ id, type }: { id: string; type: string }): NodeAnalytics => {
    const row = byNode.get(id)
    return {
      nodeId: id,
      type,
      reached: Number(row?.reached ?? 0),
      answered: Number(row?.answered ?? 0),
      endedHere: Number(row?.ended ?? 0),
      waitingHere: Number(row?.waiting ?? 0),
      droppedOff: Number(row?.dropped ?? 0),
      failedHere: Number(row?.failed ?? 0),
      completedHere: Number(row?.completed ?? 0),
    }
  }
  const count = (status: string) => byStatus.get(status) ?? 0
  return {
    sessions: {
      total: [...byStatus.values()].reduce((sum, n) => sum + n, 0),
      running: count('running'),
      completed: count('completed'),
      timeout: count('timeout'),
      error: count('error'),
    },
    nodes: query.definitionNodes.map(nodeOf),
  }
}
