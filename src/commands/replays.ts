import { sql } from 'kysely'
import { REPLAY_LIMITS, replay, replayStream, type Replay, type ReplaySelection } from '../domain/replay.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { foldStream } from '../eventstore/stream-state.js'
import { newId } from '../ids.js'
import { unfinishedReplays } from '../projections/replays.js'
import type { DbOrTrx } from '../store/database.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { flowOf } from './conversation-tests.js'
import { handleCommand } from './handle.js'
import type { Scope } from './sectors.js'

export type ReplaysContext = CommandContext & { db: DbOrTrx }

/**
 * Asks for the sessions of a published version (the live one unless told), chosen by `sessions`,
 * to be played again against the draft as it is now; a runner plays them in the background.
 */
export async function requestReplay(
  ctx: ReplaysContext,
  scope: Scope,
  flowId: string,
  body: { version?: number; sessions?: ReplaySelection },
): Promise<{ replayId: string; total: number }> {
  const flow = await flowOf(ctx, scope, flowId)
  const version = body.version ?? flow.release.liveVersion
  if (version < 1 || version > flow.publishedVersion) throw new BadRequestError(`version: flow ${flowId} has published versions 1 to ${flow.publishedVersion}`)
  const { last, from, to, status } = body.sessions ?? {}
  // What the selection names, and no more; instants kept in UTC.
  const selection: ReplaySelection = {
    ...(last !== undefined && { last }),
    ...(status !== undefined && { status }),
    ...(from !== undefined && { from: new Date(from).toISOString() }),
    ...(to !== undefined && { to: new Date(to).toISOString() }),
  }
  if (selection.from !== undefined && selection.to !== undefined && selection.from >= selection.to) throw new BadRequestError('sessions/to: is not after sessions/from')
  const unfinished = await unfinishedReplays(ctx.db, scope.organizationId)
  if (unfinished >= REPLAY_LIMITS.unfinishedPerOrganization) {
    throw new ConflictError(`this organization has ${REPLAY_LIMITS.unfinishedPerOrganization} replays not finished, the most it may; ask again once one has finished`)
  }
  const sessionIds = await chosenSessions(ctx.db, flowId, version, selection)
  const replayId = newId()
  const result = await handleCommand(ctx.store, replay, replayStream(replayId), {
    type: 'RequestReplay',
    data: {
      replayId,
      flowId,
      workspaceId: scope.workspaceId,
      organizationId: scope.organizationId,
      version,
      draftVersion: flow.draftVersion,
      definition: flow.definition,
      selection,
      sessionIds,
      now: ctx.now().toISOString(),
    },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return { replayId, total: sessionIds.length }
}

/** The version's sessions the selection names, newest first (preview sessions run no version and are never chosen). */
async function chosenSessions(db: DbOrTrx, flowId: string, version: number, selection: ReplaySelection): Promise<string[]> {
  const { rows } = await sql<{ session_id: string }>`
    select session_id from analytics_sessions
    where flow_id = ${flowId} and flow_version = ${version}
      and (${selection.status ?? null}::text is null or status = ${selection.status ?? null})
      and (${selection.from ?? null}::timestamptz is null or started_at >= ${selection.from ?? null}::timestamptz)
      and (${selection.to ?? null}::timestamptz is null or started_at < ${selection.to ?? null}::timestamptz)
    order by started_at desc, session_id desc
    limit ${selection.last ?? REPLAY_LIMITS.defaultSessions}`.execute(db)
  return rows.map((row) => row.session_id)
}

/** The replay of the caller's flow, as far as it has come; 404 for another flow's or workspace's. */
export async function replayOf(ctx: CommandContext, scope: Scope, flowId: string, replayId: string): Promise<Extract<Replay, { status: 'running' | 'finished' }>> {
  const { state } = await foldStream(ctx.store, replay, replayStream(replayId))
  if (state.status === 'none' || state.workspaceId !== scope.workspaceId || state.flowId !== flowId) throw new NotFoundError(`replay ${replayId} of this flow not found`)
  return state
}
