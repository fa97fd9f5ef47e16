import { sql, type RawBuilder } from 'kysely'
import { isPreviewTurn, type SessionEvent } from '../domain/session.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { DbOrTrx } from '../store/database.js'
import { InsertOnlyFold, defineProjection } from './projection.js'

interface ModelCalls {
  session_id: string
  message_id: string
  model: string
  called_at: string
  calls: number
  prompt_tokens: number
  completion_tokens: number
}

/** The model calls of the fold's turns, one row per turn and model. */
class ModelCallsFold extends InsertOnlyFold<SessionEvent, ModelCalls> {
  async add(_db: DbOrTrx, events: readonly { event: SessionEvent; recorded: RecordedEvent }[]): Promise<void> {
    for (const { event, recorded } of events) {
      if (event.type !== 'TurnCompleted' || isPreviewTurn(recorded.metadata)) continue
      const { sessionId, messageId, completedAt, output } = event.data
      const byModel = new Map<string, ModelCalls>()
      for (const call of output.modelCalls ?? []) {
        const row = byModel.get(call.model) ?? { session_id: sessionId, message_id: messageId, model: call.model, called_at: completedAt, calls: 0, prompt_tokens: 0, completion_tokens: 0 }
        row.calls += 1
        row.prompt_tokens += call.promptTokens
        row.completion_tokens += call.completionTokens
        byModel.set(call.model, row)
      }
      this.rows.push(...byModel.values())
    }
  }

  protected insert(rows: readonly ModelCalls[], onlyIf: RawBuilder<boolean>): RawBuilder<unknown> {
    return sql`
      insert into analytics_model_calls (session_id, message_id, model, called_at, calls, prompt_tokens, completion_tokens)
      select * from jsonb_to_recordset(cast(${JSON.stringify(rows)} as jsonb))
        as v(session_id uuid, message_id uuid, model text, called_at timestamptz, calls integer, prompt_tokens integer, completion_tokens integer)
      where ${onlyIf}
      on conflict (session_id, message_id, model) do nothing`
  }
}

/**
 * Analytics of model usage (docs/analytics.md): the model calls each turn's AI steps made, with the
 * tokens the endpoints counted, per model; a preview's turns never. The workspace and flow come
 * from `analytics_sessions`, the day from the turn's completion.
 */
export const analyticsModelCallsProjection = defineProjection<SessionEvent>({
  name: 'analytics-model-calls',
  streamPrefixes: ['session-'],
  tables: ['analytics_model_calls'],
  eventTypes: ['TurnCompleted'],
  fold: () => new ModelCallsFold(),
})

/** Model calls and the tokens they took. */
export interface ModelUsageFigures {
  calls: number
  promptTokens: number
  completionTokens: number
}

export interface FlowModelUsage extends ModelUsageFigures {
  /** Per day (in the query's time zone) with calls, oldest first. */
  days: (ModelUsageFigures & { date: string })[]
  /** Per model called, the most tokens first. */
  models: (ModelUsageFigures & { model: string })[]
}

/**
 * The model calls the sessions of one flow version made since `since` (all without it): in all, per
 * day they were made on (in `timeZone`) and per model.
 */
export async function flowModelUsage(db: DbOrTrx, query: { flowId: string; version: number; since?: Date; timeZone: string }): Promise<FlowModelUsage> {
  const since = query.since ?? null
  const { rows } = await sql<{ day: string | null; model: string | null; calls: number; prompt: string | number; completion: string | number }>`
    select day, model, sum(calls)::integer as calls, sum(prompt_tokens)::bigint as prompt, sum(completion_tokens)::bigint as completion
    from (
      select to_char(m.called_at at time zone ${query.timeZone}, 'YYYY-MM-DD') as day, m.model, m.calls, m.prompt_tokens, m.completion_tokens
      from analytics_model_calls m
      join analytics_sessions s on s.session_id = m.session_id
      where s.flow_id = ${query.flowId} and s.flow_version = ${query.version} and (${since}::timestamptz is null or m.called_at >= ${since}::timestamptz)
    ) as c
    group by grouping sets ((day), (model), ())`.execute(db)
  const figures = (row: (typeof rows)[number] | undefined): ModelUsageFigures => ({
    calls: Number(row?.calls ?? 0),
    promptTokens: Number(row?.prompt ?? 0),
    completionTokens: Number(row?.completion ?? 0),
  })
  const tokens = (usage: ModelUsageFigures) => usage.promptTokens + usage.completionTokens
  return {
    ...figures(rows.find((row) => row.day === null && row.model === null)),
    days: rows
      .filter((row) => row.day !== null)
      .map((row) => ({ date: row.day!, ...figures(row) }))
      .sort((a, b) => a.date.localeCompare(b.date)),
    models: rows
      .filter((row) => row.model !== null)
      .map((row) => ({ model: row.model!, ...figures(row) }))
      .sort((a, b) => tokens(b) - tokens(a) || a.model.localeCompare(b.model)),
  }
}
