import { sql, type Kysely } from 'kysely'
import { v5 as uuidV5 } from 'uuid'
import { session, sessionStream, type PendingTurn, type Session, type SessionEvent } from '../domain/session.js'
import { START, WrongExpectedVersionError, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import { toBigInt, type Database } from '../store/database.js'
import { prepared } from '../store/prepared.js'
import { withStreamLock } from '../commands/stream-lock.js'
import { foldStream, rememberFolded } from '../commands/stream-state.js'
import type { FlowVersions } from './flow-versions.js'
import type { RunnableFlow } from './interpreter.js'
import type { ConversationState, KanbanAction, Trigger, TurnContext, TurnOutput } from './turn.js'

export type Interpreter = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext) => TurnOutput

/**
 * Applies a turn's kanban actions to the card streams; must be idempotent (it may run again after a
 * crash). `position`: where the turn's `TurnCompleted` is in the log.
 */
export type KanbanApplier = (turn: { sessionId: string; workspaceId: string; organizationId: string; messageId: string; position: Position }, actions: KanbanAction[]) => Promise<void>

const CHECKPOINT = 'engine'
// Ids a turn makes are derived from the session and the trigger, so a replay makes the same ones.
const TURN_ID_NAMESPACE = '6f1c1a52-5a0e-4f0b-9a3c-2f7f4f1d9e10'
const MAX_ATTEMPTS = 10

type RunningSession = Exclude<Session, { status: 'none' }>

const lastMessageText = (trigger: Trigger): string => {
  if (trigger.type !== 'message') return ''
  const { message } = trigger
  switch (message.type) {
    case 'text':
      return message.text.body
    case 'interactive':
      return message.interactive.type === 'button_reply' ? message.interactive.button_reply.title : message.interactive.list_reply.title
    default:
      return message.media.caption ?? message.media.url
  }
}

/**
 * Runs conversations: follows every session stream, and for each trigger (the start, then every
 * inbound message, in order) runs the interpreter once and appends its output as `TurnCompleted`
 * with the revision it read. Two workers racing for one trigger: the second append conflicts, the
 * loser re-reads and finds the turn done.
 */
export class EngineWorker {
  private controller?: AbortController
  private loop?: Promise<void>
  /** The newest position reached and not yet being saved, and the save running. */
  private unsaved?: Position
  private saving?: Promise<void>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: EventStore,
    private readonly flows: FlowVersions,
    private readonly interpret: Interpreter,
    private readonly applyKanban: KanbanApplier,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
    private readonly metrics?: Metrics,
  ) {}

  async start(): Promise<void> {
    if (this.controller) return
    this.controller = new AbortController()
    this.loop = this.run(this.controller.signal)
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        let position = await this.readCheckpoint()
        for await (const batch of this.store.subscribeAll({ from: position, streamPrefixes: ['session-'], signal, maxBatch: 200 })) {
          await this.handleBatch(batch)
          position = batch[batch.length - 1]!.position
          this.saveInBackground(position)
        }
      } catch (error) {
        this.logger.error({ err: error }, 'engine failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  }

  private async handleBatch(batch: RecordedEvent[]): Promise<void> {
    // Each session to drive, with the revision of its newest event in the batch.
    const toDrive = new Map<string, bigint>()
    for (const recorded of batch) {
      const event = recorded as unknown as SessionEvent
      if (event.type === 'SessionStarted' || event.type === 'MessageReceived') toDrive.set(event.data.sessionId, recorded.revision)
    }
    await Promise.all([...toDrive].map(([sessionId, seenThrough]) => this.drive(sessionId, seenThrough)))
    for (const recorded of batch) {
      const event = recorded as unknown as SessionEvent
      if (event.type !== 'TurnCompleted' || event.data.output.kanban.length === 0) continue
      const scope = recorded.metadata as { workspaceId?: string; organizationId?: string }
      await this.applyKanban(
        {
          sessionId: event.data.sessionId,
          messageId: event.data.messageId,
          workspaceId: String(scope.workspaceId),
          organizationId: String(scope.organizationId),
          position: recorded.position,
        },
        event.data.output.kanban,
      )
    }
  }

  /**
   * Runs every pending turn of one session, oldest first. `seenThrough`: the session's events up to
   * this revision were read with the batch, so a state kept at least that far on is used without a
   * read; after a conflict the stream is read again.
   */
  async drive(sessionId: string, seenThrough?: bigint): Promise<void> {
    for (let conflicts = 0; conflicts < MAX_ATTEMPTS; ) {
      const knownThrough = conflicts === 0 ? seenThrough : undefined
      const outcome = await withStreamLock(sessionStream(sessionId), () => this.runNextTurn(sessionId, knownThrough))
      if (outcome === 'idle') return
      if (outcome === 'conflict') conflicts++
    }
    this.logger.warn({ sessionId }, 'engine gave up on a session after repeated conflicts; it is retried on its next event')
  }

  /** Runs the oldest pending turn: 'idle' when there is none, 'conflict' when another writer came first. */
  private async runNextTurn(sessionId: string, knownThrough?: bigint): Promise<'ran' | 'idle' | 'conflict'> {
    const { state, revision } = await foldStream(this.store, session, sessionStream(sessionId), { knownThrough })
    if (state.status === 'none' || revision === undefined) return 'idle'
    const next = state.pending[0]
    if (!next) return 'idle'
    const flow = await this.flows.get(state.flowId, state.flowVersion)
    const now = this.now()
    const endTurn = this.metrics?.engineTurnDuration.startTimer()
    const output = playTurn(this.interpret, flow, state, next, now)
    const [event] = session.decide({ type: 'CompleteTurn', data: { sessionId, messageId: next.messageId, output, now: now.toISOString() } }, state)
    if (!event) return 'idle'
    let outcome: 'completed' | 'conflict' | 'error' = 'error'
    try {
      const { nextRevision } = await this.store.append(
        sessionStream(sessionId),
        [
          {
            id: uuidV5(`${sessionId}/${next.messageId}/turn`, TURN_ID_NAMESPACE),
            type: event.type,
            data: event.data,
            metadata: { actor: 'engine', workspaceId: state.workspaceId, organizationId: state.organizationId, causationId: next.messageId },
          },
        ],
        { expectedRevision: revision },
      )
      rememberFolded(this.store, session, sessionStream(sessionId), { state: session.evolve(state, event), revision: nextRevision })
      outcome = 'completed'
      return 'ran'
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error
      outcome = 'conflict'
      return 'conflict'
    } finally {
      endTurn?.({ outcome })
    }
  }

  private async readCheckpoint(): Promise<Position> {
    const row = await this.db.selectFrom('projection_checkpoints').select(['position_commit', 'position_prepare']).where('projection', '=', CHECKPOINT).executeTakeFirst()
    return row ? { commit: toBigInt(row.position_commit), prepare: toBigInt(row.position_prepare) } : START
  }

  /**
   * Saves the checkpoint beside the next batches instead of before them, one save at a time, each
   * of the newest position reached. A checkpoint left behind (a crash, a failed save) costs a replay
   * of the triggers since, each found done: turns are appended at the revision they read, with ids
   * derived from their trigger, and kanban actions are idempotent.
   */
  private saveInBackground(position: Position): void {
    this.unsaved = position
    this.saving ??= (async () => {
      for (let next = this.unsaved; next; next = this.unsaved) {
        this.unsaved = undefined
        try {
          await this.saveCheckpoint(next)
        } catch (error) {
          this.logger.warn({ err: error }, 'engine checkpoint not saved; the next batch saves it')
        }
      }
    })().finally(() => (this.saving = undefined))
  }

  private async saveCheckpoint(position: Position): Promise<void> {
    // Several workers may share the checkpoint; it only ever moves forward.
    const save = this.db
      .insertInto('projection_checkpoints')
      .values({ projection: CHECKPOINT, position_commit: String(position.commit), position_prepare: String(position.prepare) })
      .onConflict((oc) =>
        oc
          .column('projection')
          .doUpdateSet({ position_commit: String(position.commit), position_prepare: String(position.prepare), updated_at: sql`now()` })
          .where(sql<boolean>`(projection_checkpoints.position_commit, projection_checkpoints.position_prepare) < (${String(position.commit)}::bigint, ${String(position.prepare)}::bigint)`),
      )
    await this.db.executeQuery(prepared(save.compile()))
  }

  async stop(): Promise<void> {
    this.controller?.abort()
    await this.loop
    await this.saving
    this.controller = undefined
  }
}

/**
 * The turn for a session's oldest pending trigger, exactly as the worker runs it at `now`: ids
 * derived from the session and the trigger, the time given, the session's system variables.
 * `flowd audit verify` replays recorded turns through it with the recorded `completedAt`.
 */
export function playTurn(interpret: Interpreter, flow: RunnableFlow | string, state: RunningSession, next: PendingTurn, now: Date): TurnOutput {
  if (typeof flow === 'string') return brokenFlowTurn(state.conversation, flow)
  let counter = 0
  return interpret(flow, state.conversation, next.trigger, {
    nowMicros: now.getTime() * 1000,
    newId: () => uuidV5(`${state.sessionId}/${next.messageId}/${counter++}`, TURN_ID_NAMESPACE),
    system: {
      sessionId: state.sessionId,
      externalId: state.externalId ?? '',
      flowId: state.flowId,
      workspaceId: state.workspaceId,
      lastMessage: lastMessageText(next.trigger),
    },
  })
}

/** The turn of a session whose flow version cannot be found: it ends in error. */
function brokenFlowTurn(state: ConversationState, warning: string): TurnOutput {
  return { messages: [], functions: [], kanban: [], variables: {}, warnings: [warning], visited: [], status: 'error', state: { ...state, waitingAt: null } }
}
