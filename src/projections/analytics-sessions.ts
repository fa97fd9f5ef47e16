import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely'
import type { SessionEvent } from '../domain/session.js'
import { invalidReplyWarning, type TurnOutput } from '../domain/turn.js'
import type { Database, DbOrTrx } from '../store/database.js'
import type { AnalyticsSessionsTable } from '../store/tables/analytics-sessions.js'
import { prepared } from '../store/prepared.js'
import { ROWS_PER_STATEMENT, defineProjection, inChunks, type TypedFold } from './projection.js'

/**
 * The question a reply turn answered: a reply turn starts at the question it replies to, and the
 * interpreter records `invalidReplyWarning` for every reply the question did not accept.
 */
function acceptedReplyAt(output: TurnOutput): string | null {
  const first = output.visited?.[0]
  if (first === undefined) return null
  return output.warnings.includes(invalidReplyWarning(first)) ? null : first
}

/** A flow version as analytics count its nodes: the session's own, or a sub-flow it ran. */
interface CountedFlow {
  flow_id: string
  flow_version: number
}

const nodeKey = (sessionId: string, flow: CountedFlow, nodeId: string) => `${sessionId} ${flow.flow_id}@${flow.flow_version} ${nodeId}`

/**
 * How many times the turn visited each node, in the order it first reached them, each with the flow
 * version it is of: the session's own (`own`), or a sub-flow's as `flowsVisited` says.
 */
function visitCounts(output: TurnOutput, own: CountedFlow): Map<string, { nodeId: string; flow: CountedFlow; visits: number }> {
  const counts = new Map<string, { nodeId: string; flow: CountedFlow; visits: number }>()
  const stretches = output.flowsVisited ?? []
  let flow = own
  output.visited?.forEach((nodeId, index) => {
    for (const stretch of stretches) if (stretch.from === index) flow = stretch.flow ? { flow_id: stretch.flow.flowId, flow_version: stretch.flow.version } : own
    const key = `${flow.flow_id}@${flow.flow_version} ${nodeId}`
    const counted = counts.get(key)
    if (counted) counted.visits += 1
    else counts.set(key, { nodeId, flow, visits: 1 })
  })
  return counts
}

/** The flow version a stretch of a turn or a draw is of. */
const countedFlow = (flow: { flowId: string; version: number } | null | undefined, own: CountedFlow): CountedFlow => (flow ? { flow_id: flow.flowId, flow_version: flow.version } : own)

type SessionRow = Selectable<AnalyticsSessionsTable>

const startedSession = (d: Extract<SessionEvent, { type: 'SessionStarted' }>['data']): SessionRow => ({
  session_id: d.sessionId,
  organization_id: d.organizationId,
  workspace_id: d.workspaceId,
  flow_id: d.flowId,
  flow_version: d.flowVersion,
  status: 'running',
  started_at: new Date(d.startedAt),
  finished_at: null,
  last_node_id: null,
  turns: 0,
})

/** A node reached in a batch, merged over its turns as the upsert below merges it with the stored row. */
interface NodeVisit {
  session_id: string
  node_id: string
  flow_id: string
  flow_version: number
  workspace_id: string
  session_started_at: string | Date
  first_reached_at: string
  visits: number
  answered_at: string | null
  /** The branches the node (a split) drew in these turns, each once. */
  branches: string[]
}

/**
 * Events folded in memory: the sessions they touch as they end up (the stored ones read first) and
 * the node visits they add, so the whole fold is written in a few statements.
 */
class SessionsFold implements TypedFold<SessionEvent> {
  private readonly sessions = new Map<string, SessionRow>()
  private readonly visits = new Map<string, NodeVisit>()

  /** The sessions of a rebuild's window still being written, as they will be stored. */
  private readonly beingWritten: ReadonlyMap<string, SessionRow> | undefined

  /** `writing`: that window's fold. Only its sessions are kept: keeping the fold would keep every fold before it. */
  constructor(writing?: SessionsFold) {
    this.beingWritten = writing?.sessions
  }

  get rowsHeld(): number {
    return this.sessions.size + this.visits.size
  }

  async add(db: DbOrTrx, events: readonly { event: SessionEvent }[]): Promise<void> {
    const unread = new Set<string>()
    for (const { event } of events) {
      if ((event.type !== 'TurnCompleted' && event.type !== 'SessionExpired' && event.type !== 'TurnFailed') || this.sessions.has(event.data.sessionId)) continue
      const beingWritten = this.beingWritten?.get(event.data.sessionId)
      // A copy: that fold may still be serialising its rows.
      if (beingWritten) this.sessions.set(event.data.sessionId, { ...beingWritten })
      else unread.add(event.data.sessionId)
    }
    if (unread.size > 0) {
      const read = sql<SessionRow>`select * from analytics_sessions where session_id = any(${[...unread]}::uuid[])`.compile(db)
      for (const row of (await db.executeQuery(prepared(read))).rows) this.sessions.set(row.session_id, row)
    }
    for (const { event } of events) this.addOne(event)
  }

  private addOne(event: SessionEvent): void {
    switch (event.type) {
      case 'SessionStarted':
        if (!event.data.preview && !this.sessions.has(event.data.sessionId)) this.sessions.set(event.data.sessionId, startedSession(event.data))
        return
      case 'TurnCompleted': {
        const { sessionId, output, completedAt } = event.data
        const session = this.sessions.get(sessionId)
        if (!session) return
        const visited = output.visited ?? []
        const own = { flow_id: session.flow_id, flow_version: session.flow_version }
        // The session's first turn answers its start; only a later one can answer a question.
        const answeredAt = session.turns > 0 ? acceptedReplyAt(output) : null
        // The node answered is the turn's first, and so the first counted.
        let first = true
        for (const { nodeId, flow, visits } of visitCounts(output, own).values()) {
          const key = nodeKey(sessionId, flow, nodeId)
          const answered = first && nodeId === answeredAt ? completedAt : null
          first = false
          const earlier = this.visits.get(key)
          if (earlier) {
            earlier.visits += visits
            earlier.answered_at ??= answered
          } else {
            const { workspace_id, started_at } = session
            this.visits.set(key, { session_id: sessionId, node_id: nodeId, ...flow, workspace_id, session_started_at: started_at, first_reached_at: completedAt, visits, answered_at: answered, branches: [] })
          }
        }
        for (const { nodeId, branchId, flow } of output.choices ?? []) {
          const drawnAt = this.visits.get(nodeKey(sessionId, countedFlow(flow, own), nodeId))
          if (drawnAt && !drawnAt.branches.includes(branchId)) drawnAt.branches.push(branchId)
        }
        if (session.status !== 'running') return
        session.turns += 1
        session.last_node_id = visited.at(-1) ?? session.last_node_id
        if (output.status !== 'active') {
          session.status = output.status
          session.finished_at = new Date(completedAt)
        }
        return
      }
      case 'SessionExpired':
      case 'TurnFailed': {
        const session = this.sessions.get(event.data.sessionId)
        if (session?.status !== 'running') return
        const expired = event.type === 'SessionExpired'
        session.status = expired ? 'timeout' : 'error'
        session.finished_at = new Date(expired ? event.data.expiredAt : event.data.failedAt)
        return
      }
    }
  }

  // Every statement of a batch is prepared (a fixed text): the live read model runs them many times a second.
  async write(trx: Transaction<Database>): Promise<void> {
    await inChunks(this.sessions.values(), ROWS_PER_STATEMENT, (rows) =>
      runPrepared(trx, sql`
        insert into analytics_sessions as s
          (session_id, organization_id, workspace_id, flow_id, flow_version, status, started_at, finished_at, last_node_id, turns)
        select * from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
          as v(session_id uuid, organization_id uuid, workspace_id uuid, flow_id uuid, flow_version integer, status text,
               started_at timestamptz, finished_at timestamptz, last_node_id text, turns integer)
        on conflict (session_id) do update set
          status = excluded.status, finished_at = excluded.finished_at, last_node_id = excluded.last_node_id, turns = excluded.turns
        -- A row as its session began says nothing new: a repeated start leaves the stored row as it is.
        where excluded.turns > 0 or excluded.status <> 'running'`),
    )
    await inChunks(this.visits.values(), ROWS_PER_STATEMENT, (rows) =>
      runPrepared(trx, sql`
        insert into analytics_session_nodes as n
          (session_id, node_id, flow_id, flow_version, workspace_id, session_started_at, first_reached_at, visits, answered_at, branches)
        select * from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
          as v(session_id uuid, node_id text, flow_id uuid, flow_version integer, workspace_id uuid,
               session_started_at timestamptz, first_reached_at timestamptz, visits integer, answered_at timestamptz, branches text[])
        on conflict (session_id, flow_id, flow_version, node_id) do update set
          visits = n.visits + excluded.visits,
          answered_at = coalesce(n.answered_at, excluded.answered_at),
          branches = array(select distinct branch from unnest(n.branches || excluded.branches) as u(branch) order by branch)`),
    )
  }
}

const runPrepared = async (trx: Transaction<Database>, statement: RawBuilder<unknown>): Promise<void> => {
  await trx.executeQuery(prepared(statement.compile(trx)))
}

/**
 * Analytics of sessions (docs/analytics.md): each session once (a preview never: it has no row, so
 * its later events change nothing here), with its status, duration and the
 * last node it reached, and each node it reached with its visits, whether a reply there was
 * accepted and, for a split, the branches it drew. Nodes come from the turns' `visited` paths: a
 * turn recorded without one adds none; branches from their `choices`.
 */
export const analyticsSessionsProjection = defineProjection<SessionEvent>({
  name: 'analytics-sessions',
  streamPrefixes: ['session-'],
  tables: ['analytics_sessions', 'analytics_session_nodes'],
  eventTypes: ['SessionStarted', 'TurnCompleted', 'TurnFailed', 'SessionExpired'],
  fold: ({ writing }) => new SessionsFold(writing instanceof SessionsFold ? writing : undefined),
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

/** One branch of a split node: the sessions that drew it at least once, and of those the completed ones. */
export interface BranchAnalytics {
  nodeId: string
  branchId: string
  sessions: number
  completed: number
}

export interface FlowVersionAnalytics {
  sessions: { total: number; running: number; completed: number; timeout: number; error: number }
  /** Sessions started per day (in `timeZone`), only the days that had some, oldest first. */
  days: { date: string; started: number; completed: number }[]
  nodes: NodeAnalytics[]
  branches: BranchAnalytics[]
}

/**
 * Per node of one flow version, over its sessions started since `startedSince` (all without it): how
 * many reached the node, had a reply accepted there, and ended there, by how their session stands;
 * and per branch of its split nodes, how many drew the branch and how many of those completed.
 * Every node of `definitionNodes` and every branch of `definitionBranches` is listed, in its order,
 * the ones no session reached with zeros.
 */
export async function flowVersionAnalytics(
  db: DbOrTrx,
  query: {
    flowId: string
    version: number
    startedSince?: Date
    timeZone: string
    definitionNodes: readonly { id: string; type: string }[]
    definitionBranches: readonly { nodeId: string; branchId: string }[]
  },
): Promise<FlowVersionAnalytics> {
  const since = query.startedSince ?? null
  const [statuses, days, visits, drawn] = await Promise.all([
    sql<{ status: string; n: number }>`
      select status, count(*)::integer as n from analytics_sessions
      where flow_id = ${query.flowId} and flow_version = ${query.version} and (${since}::timestamptz is null or started_at >= ${since}::timestamptz)
      group by status`.execute(db),
    sql<{ day: string; started: number; completed: number }>`
      select to_char(started_at at time zone ${query.timeZone}, 'YYYY-MM-DD') as day, count(*)::integer as started,
             count(*) filter (where status = 'completed')::integer as completed
      from analytics_sessions
      where flow_id = ${query.flowId} and flow_version = ${query.version} and (${since}::timestamptz is null or started_at >= ${since}::timestamptz)
      group by day order by day`.execute(db),
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
    sql<{ node_id: string; branch: string; sessions: number; completed: number }>`
      select n.node_id, b.branch, count(*)::integer as sessions, count(*) filter (where s.status = 'completed')::integer as completed
      from analytics_session_nodes n
      join analytics_sessions s on s.session_id = n.session_id
      cross join lateral unnest(n.branches) as b(branch)
      where n.flow_id = ${query.flowId} and n.flow_version = ${query.version}
        and (${since}::timestamptz is null or n.session_started_at >= ${since}::timestamptz)
      group by n.node_id, b.branch`.execute(db),
  ])
  const byStatus = new Map(statuses.rows.map((row) => [row.status, Number(row.n)]))
  const byNode = new Map(visits.rows.map((row) => [row.node_id, row]))
  const branchKey = (nodeId: string, branchId: string) => JSON.stringify([nodeId, branchId])
  const byBranch = new Map(drawn.rows.map((row) => [branchKey(row.node_id, row.branch), row]))
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
    days: days.rows.map((row) => ({ date: row.day, started: Number(row.started), completed: Number(row.completed) })),
    nodes: query.definitionNodes.map(nodeOf),
    branches: query.definitionBranches.map(({ nodeId, branchId }) => {
      const row = byBranch.get(branchKey(nodeId, branchId))
      return { nodeId, branchId, sessions: Number(row?.sessions ?? 0), completed: Number(row?.completed ?? 0) }
    }),
  }
}

/** One version's sessions in a comparison of a flow's versions. */
export interface VersionFigures {
  version: number
  sessions: { total: number; running: number; completed: number; timeout: number; error: number }
  /** Sessions that asked for a transfer at least once. */
  transferred: number
}

/**
 * Every published version of the flow with sessions started since `startedSince` (all without it),
 * side by side: by status (a timed-out session dropped off) and how many transferred; newest first.
 */
export async function flowVersionsCompared(db: DbOrTrx, query: { flowId: string; startedSince?: Date }): Promise<VersionFigures[]> {
  const since = query.startedSince ?? null
  const { rows } = await sql<{ flow_version: number; total: number; running: number; completed: number; timeout: number; error: number; transferred: number }>`
    select s.flow_version, count(*)::integer as total,
           count(*) filter (where s.status = 'running')::integer as running,
           count(*) filter (where s.status = 'completed')::integer as completed,
           count(*) filter (where s.status = 'timeout')::integer as timeout,
           count(*) filter (where s.status = 'error')::integer as error,
           count(*) filter (where exists (select 1 from analytics_transfers t where t.session_id = s.session_id))::integer as transferred
    from analytics_sessions s
    where s.flow_id = ${query.flowId} and s.flow_version > 0 and (${since}::timestamptz is null or s.started_at >= ${since}::timestamptz)
    group by s.flow_version
    order by s.flow_version desc`.execute(db)
  return rows.map((row) => ({
    version: Number(row.flow_version),
    sessions: { total: Number(row.total), running: Number(row.running), completed: Number(row.completed), timeout: Number(row.timeout), error: Number(row.error) },
    transferred: Number(row.transferred),
  }))
}
