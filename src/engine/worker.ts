import { createHash } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import { v5 as uuidV5 } from 'uuid'
import { NO_MODEL_USAGE, PREVIEW_TURN_METADATA, addedModelUsage, isPreviewTurn, session, sessionStream, type PendingTurn, type Session, type SessionCommand, type SessionEvent, type TurnFailureReason } from '../domain/session.js'
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../metrics/registry.js'
import type { Database } from '../store/database.js'
import { advanceCheckpoints } from '../projections/checkpoints.js'
import { workspaceTimeZone } from '../projections/date-range.js'
import { runLogProcessor } from '../processors/loop.js'
import { EventSchemaError, decideOnState } from '../commands/handle.js'
import { withStreamLock } from '../eventstore/stream-lock.js'
import { FAILURES_BEFORE_PARKING, backoffMs, isTransient } from '../processors/failures.js'
import { StreamParking, findParked, listParked, parkedEvent, unpark, type ParkingEvent } from '../processors/parked-streams.js'
import { foldStream } from '../eventstore/stream-state.js'
import { FairTurns, type SessionTurns } from './fair-turns.js'
import { ConflictRetries, TurnKeepsConflictingError, parkedForConflicts } from './conflict-retries.js'
import { DEFAULT_ENGINE_PARTITIONS } from '../config.js'
import type { FlowVersions } from './flow-versions.js'
import { earliest, everyPartition, partitionCheckpoint, partitionOf, partitionPositions, type SessionPartitions } from './partitions.js'
import { aiConnectionsCalled, readsTimeZone, type RunnableFlow } from './interpreter.js'
import type { ConnectionAsUsed } from '../domain/ai-connection.js'
import { connectionsAsUsed } from '../commands/ai-connections.js'
import { triggerText, type Choice, type ConversationState, type KanbanAction, type ModelCall, type Trigger, type TurnContext, type TurnOutput } from '../domain/turn.js'
import type { CallNeeded } from '../domain/outside-call.js'
import type { OutsideCalls } from './outside-calls.js'
import { scheduleTimers, timersSet } from './timers.js'

export type Interpreter = (flow: RunnableFlow, state: ConversationState, trigger: Trigger, context: TurnContext) => TurnOutput | CallNeeded

/**
 * Applies a turn's kanban actions to the card streams; must be idempotent (it may run again after a
 * crash). `position`: where the turn's `TurnCompleted` is in the log.
 */
export type KanbanApplier = (turn: { sessionId: string; workspaceId: string; organizationId: string; messageId: string; position: Position }, actions: KanbanAction[]) => Promise<void>

/** The engine's name as a processor of the log (parked streams), whichever partition drives the session. */
export const ENGINE_PROCESSOR = 'engine'
// Ids a turn makes are derived from the session and the trigger, so a replay makes the same ones.
const TURN_ID_NAMESPACE = '6f1c1a52-5a0e-4f0b-9a3c-2f7f4f1d9e10'
/**
 * Appends of one turn lost in a row to other writers of its session before the session is handed
 * to the conflict retries: two engines meeting on a turn settle in one, and waiting longer here
 * would hold the batch, and so every other session, behind this one.
 */
const CONFLICTS_BEFORE_RETRY_SCHEDULE = 3
/**
 * The least time between two saves of the checkpoints: a save writes a row per partition held, and
 * a busy engine reaches a new position every few milliseconds, while a checkpoint left behind only
 * costs triggers found done when another run goes on from it.
 */
const CHECKPOINT_SAVE_PAUSE_MS = 50
/** How often the worker looks for calls whose process died before recording their answer. */
const STALLED_CALLS_INTERVAL_MS = 5_000
/**
 * A pending call older than this has outlived any timeout a call may have: whoever started it is
 * gone, and it is made again.
 */
const STALLED_CALL_GRACE_MS = 60_000

/** The events after which the engine runs a session's pending turn: its triggers, and the answers its turns wait for. */
const DRIVES_TURNS: ReadonlySet<string> = new Set(['SessionStarted', 'MessageReceived', 'OutsideEventReceived', 'TimerFired', 'OutsideCallAnswered'])

/**
 * Whose share of the engine a trigger takes: its organization (in the metadata of the commands'
 * events, and in a session's start), else its workspace.
 */
const organizationOf = (recorded: RecordedEvent): string => {
  const event = recorded as unknown as SessionEvent
  if (event.type === 'SessionStarted') return event.data.organizationId
  const { organizationId, workspaceId } = recorded.metadata
  return typeof organizationId === 'string' ? organizationId : String(workspaceId ?? '')
}

const failureReason = (error: unknown): TurnFailureReason => (error instanceof EventSchemaError ? 'invalid_turn' : 'engine_error')

type RunningSession = Exclude<Session, { status: 'none' }>

const SESSION_STREAM_PREFIX = sessionStream('')
const sessionOfStream = (stream: string): string => stream.slice(SESSION_STREAM_PREFIX.length)

/**
 * Whether a recorded turn has kanban actions to carry out on the board. A preview's turns record
 * theirs (the editor's test panel shows them) but never move a real card.
 */
const movesCards = (recorded: RecordedEvent): boolean => {
  const event = recorded as unknown as SessionEvent
  return event.type === 'TurnCompleted' && event.data.output.kanban.length > 0 && !isPreviewTurn(recorded.metadata)
}
type SessionCommandOf<Type extends SessionCommand['type']> = Extract<SessionCommand, { type: Type }>

/**
 * Runs conversations: follows the session streams of the partitions it drives, and for each
 * trigger (the start, then every inbound message, in order) runs the interpreter once and appends
 * its output as `TurnCompleted` with the revision it read. Two workers racing for one trigger: the second append conflicts, the
 * loser re-reads and finds the turn done.
 */
export class EngineWorker {
  private controller?: AbortController
  private loop?: Promise<void>
  /** Where each partition driven goes on from: its events up to there are handled. */
  private from = new Map<number, Position>()
  /** The partitions driven, and their checkpoints. */
  private partitions?: SessionPartitions
  private checkpoints: string[] = []
  /** The newest position reached and not yet being saved, and the save running. */
  private unsaved?: Position
  private saving?: Promise<void>
  private readonly parking: StreamParking
  private readonly conflictRetries: ConflictRetries
  private readonly turns: FairTurns
  private stalledCallsTimer?: NodeJS.Timeout
  /** Makes the calls turns wait for; without it, a turn that needs one fails. */
  private readonly calls?: OutsideCalls
  /** Calls started before this (another process's, or this one's before a restart) are stalled once not in flight here. */
  private startedAt = new Date()

  private readonly db: Kysely<Database>
  private readonly store: EventStore
  private readonly flows: FlowVersions
  private readonly interpret: Interpreter
  private readonly applyKanban: KanbanApplier
  private readonly logger: Logger
  private readonly now: () => Date
  private readonly metrics?: Metrics

  constructor(
    db: Kysely<Database>,
    store: EventStore,
    flows: FlowVersions,
    interpret: Interpreter,
    applyKanban: KanbanApplier,
    logger: Logger,
    now: () => Date = () => new Date(),
    metrics?: Metrics,
    conflictRetryCapMs?: number,
    calls?: OutsideCalls,
  ) {
    this.calls = calls
    this.db = db
    this.store = store
    this.flows = flows
    this.interpret = interpret
    this.applyKanban = applyKanban
    this.logger = logger
    this.now = now
    this.metrics = metrics
    this.parking = new StreamParking(ENGINE_PROCESSOR, logger, metrics)
    this.conflictRetries = new ConflictRetries({
      retry: (stream) => this.retryConflicting(stream),
      parked: async () => (await listParked(this.db, ENGINE_PROCESSOR)).filter((parked) => parkedForConflicts(parked) && this.drivesSessionOf(parked.stream)).map((parked) => parked.stream),
      logger,
      metrics,
      capMs: conflictRetryCapMs,
    })
    this.turns = new FairTurns(
      {
        runTurns: (turns) => this.runTurns(turns),
        carryOutKanban: async (recorded) => {
          if (!this.parking.waits(recorded)) await this.settle(recorded, () => this.carryOutKanban(recorded))
        },
        handledThrough: (through) => this.saveInBackground(through),
      },
      logger,
    )
  }

  /** Whether the session of `stream` is in a partition this worker drives. */
  private drivesSessionOf(stream: string): boolean {
    const partitions = this.partitions
    return partitions !== undefined && partitions.held.includes(partitionOf(sessionOfStream(stream), partitions.count))
  }

  /** Drives the sessions of `partitions` (every session, by default) until {@link stop}. */
  async start(partitions: SessionPartitions = { count: DEFAULT_ENGINE_PARTITIONS, held: everyPartition(DEFAULT_ENGINE_PARTITIONS) }): Promise<void> {
    if (this.controller) return
    this.controller = new AbortController()
    this.partitions = partitions
    this.checkpoints = partitions.held.map(partitionCheckpoint)
    this.conflictRetries.start()
    this.startedAt = new Date()
    this.loop = this.run(partitions, this.controller.signal)
    if (this.calls) this.stalledCallsTimer = setInterval(() => void this.makeStalledCalls(), STALLED_CALLS_INTERVAL_MS)
  }

  /**
   * Drives the sessions of the partitions held whose call no process answers (src/engine/outside-calls.ts):
   * their turn asks for the call again. A session that asks for none any more drops its rows.
   */
  async makeStalledCalls(): Promise<void> {
    const calls = this.calls
    if (!calls) return
    try {
      const before = Math.max(this.startedAt.getTime(), Date.now() - STALLED_CALL_GRACE_MS)
      for (const sessionId of await calls.stalled(before)) {
        if (!this.drivesSessionOf(sessionStream(sessionId))) continue
        await this.drive(sessionId)
        if (!calls.makes(sessionId)) await calls.forget(sessionId)
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'stalled calls not looked at; trying again later')
    }
  }

  /**
   * Follows the session streams as one log processor (src/processors/loop.ts) for every partition
   * driven: from the earliest of their checkpoints, each session's events handled only past its
   * partition's. What a batch asks for is handed to {@link FairTurns}, which runs it shared out by
   * organization while the log is read on, and moves every checkpoint past the batches whose work is done.
   * A session's own failures stay with it (drive, settle: its stream parks), so they never hold the
   * checkpoint for the others; what reaches FairTurns is transient (the database went away) and is
   * tried again there; a failed read is read again from the checkpoint after a pause.
   */
  private run({ count, held }: SessionPartitions, signal: AbortSignal): Promise<void> {
    const drives = (event: RecordedEvent) => {
      const from = this.from.get(partitionOf(sessionOfStream(event.stream), count))
      return from !== undefined && comparePositions(event.position, from) > 0
    }
    return runLogProcessor(
      {
        name: ENGINE_PROCESSOR,
        streamPrefixes: [SESSION_STREAM_PREFIX],
        maxBatch: 200,
        resume: async () => {
          await this.turns.reset()
          await this.parking.load(this.db)
          this.from = await partitionPositions(this.db, held)
          return earliest(this.from.values())
        },
        handle: async (batch, _from, through) => {
          const driven = batch.filter(drives)
          // Before the checkpoint passes the turns that set them: a timer is never lost to a crash.
          await scheduleTimers(this.db, timersSet(driven))
          const { sessions, kanban } = driven.length > 0 ? await this.workOf(driven) : { sessions: [], kanban: [] }
          await this.turns.add(through, batch.length, sessions, kanban)
          return { position: through }
        },
      },
      this.store,
      this.logger,
      signal,
      5_000,
    )
  }

  /**
   * What a batch asks of the engine: each session to drive, with the revision of its newest event in
   * the batch and its first trigger there (where its stream parks, should it come to that), and the
   * turns whose kanban actions are to be carried out.
   */
  private async workOf(batch: RecordedEvent[]): Promise<{ sessions: SessionTurns[]; kanban: RecordedEvent[] }> {
    if (this.parking.meets(batch)) await this.parking.refresh(this.db, batch)
    const sessions = new Map<string, SessionTurns>()
    for (const recorded of batch) {
      const event = recorded as unknown as SessionEvent
      if (!DRIVES_TURNS.has(event.type) || this.parking.waits(recorded)) continue
      const sessionId = event.data.sessionId
      const first = sessions.get(sessionId)
      sessions.set(sessionId, { sessionId, organizationId: first?.organizationId ?? organizationOf(recorded), seenThrough: recorded.revision, trigger: first?.trigger ?? recorded })
    }
    return { sessions: [...sessions.values()], kanban: batch.filter((recorded) => movesCards(recorded) && !this.parking.waits(recorded)) }
  }

  /** A session's pending turns, unless its stream has been parked since they were read. */
  private async runTurns({ sessionId, seenThrough, trigger }: SessionTurns): Promise<void> {
    if (this.parking.waits(trigger)) return
    await this.settle(trigger, () => this.drive(sessionId, seenThrough))
  }

  /**
   * Runs `work` for `event`'s session; a failure that is not transient parks the session's stream
   * at `event`, and the batch goes on (a turn that keeps conflicting goes to the conflict retries
   * too). A transient one is the batch's, and it is read again. True when `work` succeeded.
   */
  private async settle(event: ParkingEvent, work: () => Promise<void>): Promise<boolean> {
    try {
      await work()
      return true
    } catch (error) {
      if (isTransient(error)) throw error
      const conflicts = error instanceof TurnKeepsConflictingError
      await this.parking.park(this.db, event, error, conflicts ? error.conflicts : FAILURES_BEFORE_PARKING)
      if (conflicts) this.conflictRetries.schedule(event.stream)
      return false
    }
  }

  /** A turn's kanban actions, tried again with backoff when they fail; they are idempotent. */
  private async carryOutKanban(recorded: RecordedEvent): Promise<void> {
    const event = recorded as unknown as Extract<SessionEvent, { type: 'TurnCompleted' }>
    const scope = recorded.metadata as { workspaceId?: string; organizationId?: string }
    const turn = { sessionId: event.data.sessionId, messageId: event.data.messageId, workspaceId: String(scope.workspaceId), organizationId: String(scope.organizationId), position: recorded.position }
    for (let failures = 1; ; failures++) {
      try {
        return await this.applyKanban(turn, event.data.output.kanban)
      } catch (error) {
        if (isTransient(error) || failures >= FAILURES_BEFORE_PARKING) throw error
        this.logger.warn({ err: error, sessionId: turn.sessionId, messageId: turn.messageId, failures }, 'kanban actions of a turn failed; trying again')
        await delay(backoffMs(failures))
      }
    }
  }

  /**
   * Runs every pending turn of one session, oldest first. `seenThrough`: the session's events up to
   * this revision were read with the batch, so a state kept at least that far on is used without a
   * read; after a conflict the stream is read again.
   *
   * A turn that fails again and again (FAILURES_BEFORE_PARKING tries) ends the session in error
   * with `TurnFailed`; nothing else is given up: a turn that keeps losing to other writers
   * (CONFLICTS_BEFORE_RETRY_SCHEDULE appends in a row) throws {@link TurnKeepsConflictingError},
   * and `settle` hands its session to the conflict retries.
   */
  async drive(sessionId: string, seenThrough?: bigint): Promise<void> {
    const stream = sessionStream(sessionId)
    let conflicts = 0
    let failures = 0
    for (;;) {
      let outcome: 'ran' | 'idle' | 'conflict'
      try {
        const alreadyReadThrough = conflicts === 0 && failures === 0 ? seenThrough : undefined
        outcome = await withStreamLock(stream, () => this.runNextTurn(sessionId, alreadyReadThrough))
      } catch (error) {
        if (isTransient(error)) throw error
        failures++
        this.logger.warn({ err: error, sessionId, failures }, 'engine turn failed')
        if (failures < FAILURES_BEFORE_PARKING) {
          await delay(backoffMs(failures))
          continue
        }
        outcome = await withStreamLock(stream, () => this.failTurn(sessionId, failureReason(error)))
      }
      if (outcome === 'idle') return
      if (outcome === 'ran') {
        conflicts = failures = 0
        continue
      }
      if (++conflicts >= CONFLICTS_BEFORE_RETRY_SCHEDULE) throw new TurnKeepsConflictingError(stream, conflicts)
    }
  }

  /** Runs the oldest pending turn: 'idle' when there is none, 'conflict' when another writer came first. */
  private async runNextTurn(sessionId: string, alreadyReadThrough?: bigint): Promise<'ran' | 'idle' | 'conflict'> {
    const { state, revision } = await foldStream(this.store, session, sessionStream(sessionId), { alreadyReadThrough })
    if (state.status === 'none' || revision === undefined) return 'idle'
    const next = state.pending[0]
    if (!next) return 'idle'
    const flow = await this.flows.ofSession(state)
    // Read only for the flows whose turns read it, so the others cost no query.
    const timeZone = typeof flow !== 'string' && readsTimeZone(flow) ? await workspaceTimeZone(this.db, state.workspaceId) : undefined
    const aiConnections = typeof flow === 'string' ? undefined : await this.aiConnectionsOf(state.workspaceId, flow)
    const now = this.now()
    const endTurn = this.metrics?.engineTurnDuration.startTimer()
    let outcome: 'completed' | 'calling' | 'conflict' | 'error' = 'error'
    try {
      const output = playTurn(this.interpret, flow, state, next, now, { timeZone, aiConnections })
      if (output.status === 'calling') {
        if (!this.calls) throw new Error('this engine makes no calls outside')
        const preview = state.previewDefinition !== null
        await this.calls.start({ ...output, sessionId, messageId: next.messageId, workspaceId: state.workspaceId, organizationId: state.organizationId, preview })
        outcome = 'calling'
        return 'idle'
      }
      const turn = { sessionId, messageId: next.messageId, output, now: now.toISOString(), ...(timeZone !== undefined && { timeZone }), ...(aiConnections !== undefined && { aiConnections }) }
      const ran = await this.appendTurnEvent(state, revision, { type: 'CompleteTurn', data: turn }, 'turn')
      outcome = ran === 'conflict' ? 'conflict' : 'completed'
      if (ran === 'ran') this.countModelCalls(output.modelCalls ?? [])
      return ran
    } finally {
      endTurn?.({ outcome })
    }
  }

  /** The AI connections the flow's AI steps call, as they stand now (a deleted one left out); undefined for a flow without AI steps. */
  private async aiConnectionsOf(workspaceId: string, flow: RunnableFlow): Promise<Record<string, ConnectionAsUsed> | undefined> {
    const called = aiConnectionsCalled(flow)
    return called.length === 0 ? undefined : connectionsAsUsed(this.store, workspaceId, called)
  }

  private countModelCalls(calls: readonly ModelCall[]): void {
    if (!this.metrics || calls.length === 0) return
    const usage = addedModelUsage(NO_MODEL_USAGE, calls)
    this.metrics.modelCalls.inc(usage.calls)
    this.metrics.modelTokens.inc({ kind: 'prompt' }, usage.promptTokens)
    this.metrics.modelTokens.inc({ kind: 'completion' }, usage.completionTokens)
  }

  /** Ends the session in error with `TurnFailed` for its oldest pending trigger. */
  private async failTurn(sessionId: string, reason: TurnFailureReason): Promise<'ran' | 'idle' | 'conflict'> {
    const { state, revision } = await foldStream(this.store, session, sessionStream(sessionId))
    if (state.status === 'none' || revision === undefined || !state.pending[0]) return 'idle'
    const { messageId } = state.pending[0]
    const outcome = await this.appendTurnEvent(state, revision, { type: 'FailTurn', data: { sessionId, messageId, reason, now: this.now().toISOString() } }, 'failed')
    if (outcome === 'ran') this.logger.warn({ sessionId, messageId, reason }, 'a turn could not be completed; its session ended in error')
    return outcome
  }

  /**
   * Decides `command` on the session read at `revision` and appends its event there, through the
   * command path every write takes; the event's id is derived from the session, the trigger and
   * `kind`, so a replay makes the same one.
   */
  private async appendTurnEvent(state: RunningSession, revision: bigint, command: SessionCommandOf<'CompleteTurn' | 'FailTurn'>, kind: string): Promise<'ran' | 'idle' | 'conflict'> {
    const { sessionId, messageId } = command.data
    const metadata = { actor: 'engine', workspaceId: state.workspaceId, organizationId: state.organizationId, causationId: messageId, ...(state.previewDefinition ? PREVIEW_TURN_METADATA : {}) }
    const eventId = () => uuidV5(`${sessionId}/${messageId}/${kind}`, TURN_ID_NAMESPACE)
    const result = await decideOnState(this.store, session, sessionStream(sessionId), { state, revision }, command, metadata, eventId)
    if (result === 'conflict') return 'conflict'
    return result.events.length > 0 ? 'ran' : 'idle'
  }

  /**
   * Replays a parked session once the cause is fixed (`flowd processors retry`): its turns' kanban
   * actions from the parked event on, then its pending turns (whose kanban actions the running
   * engine carries out, as for every turn after its checkpoint). False when it was not parked.
   * Failing again, it parks again where it stopped.
   */
  async retryParked(stream: string): Promise<boolean> {
    const parked = await findParked(this.db, ENGINE_PROCESSOR, stream)
    if (!parked) return false
    // Off the list first: events written from now on are the live engine's again, and the ones
    // before are replayed here; both sides are idempotent.
    await unpark(this.db, ENGINE_PROCESSOR, stream)
    this.parking.forget(stream)
    const events = (await this.store.readStream(stream)).filter((e) => comparePositions(e.position, parked.position) >= 0)
    for (const recorded of events) {
      if (movesCards(recorded)) await this.settle(recorded, () => this.carryOutKanban(recorded))
      if (this.parking.waits(recorded)) return true
    }
    const first = events[0]
    const sessionId = sessionOfStream(stream)
    if (first) await this.settle(first, () => this.drive(sessionId))
    else await this.drive(sessionId)
    return true
  }

  /**
   * One scheduled try of a session parked because its turn kept conflicting (ConflictRetries). Its
   * pending turns run while it stays parked: the live engine passes over its later events, so a
   * later message never gets its turn before an earlier one. Once they are appended it is retried
   * like every other parked stream, which unparks it and carries out the kanban actions of the turns it held.
   * Conflicting again, `settle` keeps it parked and schedules it again.
   */
  private async retryConflicting(stream: string): Promise<void> {
    const parked = await findParked(this.db, ENGINE_PROCESSOR, stream)
    if (!parked || !parkedForConflicts(parked)) return
    if (await this.settle(parkedEvent(parked), () => this.drive(sessionOfStream(stream)))) await this.retryParked(stream)
  }

  /**
   * Saves the checkpoints beside the next batches instead of before them, one save at a time, each
   * of the newest position reached, and at most one save per CHECKPOINT_SAVE_PAUSE_MS while the
   * worker runs (the last one when it stops at once). A checkpoint left behind (a crash, a failed
   * save) costs a replay of the triggers since, each found done: turns are appended at the revision
   * they read, with ids derived from their trigger, and kanban actions are idempotent.
   */
  private saveInBackground(position: Position): void {
    const running = this.controller?.signal
    if (!running) return
    this.unsaved = position
    this.saving ??= (async () => {
      for (let next = this.unsaved; next; next = this.unsaved) {
        this.unsaved = undefined
        try {
          await advanceCheckpoints(this.db, this.checkpoints, next)
        } catch (error) {
          this.logger.warn({ err: error }, 'engine checkpoint not saved; the next batch saves it')
        }
        await delay(CHECKPOINT_SAVE_PAUSE_MS, undefined, { signal: running }).catch(() => {})
      }
    })().finally(() => (this.saving = undefined))
  }

  async stop(): Promise<void> {
    clearInterval(this.stalledCallsTimer)
    this.controller?.abort()
    // Once to free a read waiting for room, again for what a last batch read meanwhile started.
    await this.turns.reset()
    await this.loop
    await this.turns.reset()
    await this.conflictRetries.stop()
    await this.saving
    this.controller = undefined
  }
}

/** What a turn reads besides the session and its trigger, recorded with it where its flow needs it. */
export interface TurnInputs {
  /** The workspace's time zone; UTC when not given. */
  timeZone?: string
  /** The branches a recorded turn drew, which a replay takes. */
  choices?: readonly Choice[]
  /** The AI connections the flow's AI steps call, as they stood for the turn. */
  aiConnections?: Readonly<Record<string, ConnectionAsUsed>>
}

/**
 * The turn for a session's oldest pending trigger, exactly as the worker runs it at `now`: ids and
 * draws derived from the session and the trigger, the time given, the session's system variables
 * and texts so far. `flowd audit verify` replays recorded turns through it with the recorded
 * `completedAt`, `timeZone`, `aiConnections` and `choices`.
 */
export function playTurn(interpret: Interpreter, flow: RunnableFlow | string, state: RunningSession, next: PendingTurn, now: Date, inputs: TurnInputs = {}): TurnOutput | CallNeeded {
  const { timeZone = 'UTC', choices, aiConnections } = inputs
  if (typeof flow === 'string') return brokenFlowTurn(state.conversation, flow)
  let counter = 0
  let draws = 0
  return interpret(flow, state.conversation, next.trigger, {
    nowMicros: now.getTime() * 1000,
    timeZone,
    newId: () => uuidV5(`${state.sessionId}/${next.messageId}/${counter++}`, TURN_ID_NAMESPACE),
    // A turn that waits for a call outside runs again from its start once the answer is recorded: it
    // must draw the same branches before the call as the first run did.
    random: () => drawOf(`${state.sessionId}/${next.messageId}/${draws++}`),
    ...(choices !== undefined && { choices }),
    ...(aiConnections !== undefined && { aiConnections }),
    transcript: state.transcript,
    system: {
      sessionId: state.sessionId,
      externalId: state.externalId ?? '',
      flowId: state.flowId,
      workspaceId: state.workspaceId,
      lastMessage: triggerText(next.trigger),
    },
    calls: state.calls,
  })
}

/** A number in [0, 1) from the first 48 bits of the name's SHA-256: evenly spread, and the same for the same name. */
const drawOf = (name: string): number => createHash('sha256').update(`draw/${name}`).digest().readUIntBE(0, 6) / 2 ** 48

/** The turn of a session whose flow version cannot be found: it ends in error. */
function brokenFlowTurn(state: ConversationState, warning: string): TurnOutput {
  return { messages: [], functions: [], kanban: [], variables: {}, warnings: [warning], visited: [], status: 'error', state: { ...state, waitingAt: null } }
}
