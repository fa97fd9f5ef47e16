import { setImmediate } from 'node:timers/promises'
import { comparable, replayedTurns, type ReplayedTurn } from './replayed-turns.js'
import { sameJson } from '../domain/json.js'
import { awaitReadModels, type CommandContext } from '../commands/context.js'
import { handleCommand } from '../commands/handle.js'
import { REPLAY_LIMITS, replay, replayStream, type DifferingSession, type ReplayRequest, type TurnSide, type TurnTrigger } from '../domain/replay.js'
import { sessionStream, type SessionEvent } from '../domain/session.js'
import { sentText, triggerText, type Trigger } from '../domain/turn.js'
import { foldStream } from '../eventstore/stream-state.js'
import type { Logger } from '../logger.js'
import { nextReplays } from '../projections/replays.js'
import type { DbOrTrx } from '../store/database.js'
import type { FlowVersions } from './flow-versions.js'
import { runTurnOrCall } from './interpreter.js'

/** Sessions played between two records of progress. */
const BATCH = 25
/** Replays (each of another organization) advanced a batch per round. */
const REPLAYS_PER_ROUND = 8
/** How long a stop waits for the batch in flight. */
const STOP_WAIT_MS = 3000

/**
 * Where the draft of `request` would first make the session's turns differ from the recorded ones,
 * or null when it would make every turn alike. Each turn is played from the recorded state before
 * it, on its recorded clock, choices, AI connections and call answers: nothing is sent or called.
 */
export async function firstDifference(store: CommandContext['store'], flows: FlowVersions, request: Pick<ReplayRequest, 'definition'>, sessionId: string): Promise<DifferingSession | null> {
  const events = await store.readStream(sessionStream(sessionId))
  // The draft as this session would run it (its sub-flows as of its start): checked once, not once a turn.
  let draft: ReturnType<FlowVersions['ofSession']> | undefined
  const loadDraft = (session: Parameters<FlowVersions['ofSession']>[0]) => (draft ??= flows.ofSession({ ...session, previewDefinition: request.definition }))
  for await (const turn of replayedTurns(events, loadDraft, runTurnOrCall)) {
    // As stored: a key the replay leaves undefined is no key at all.
    if (sameJson({ type: turn.recorded.type, data: turn.recorded.data }, JSON.parse(JSON.stringify(comparable(turn))))) continue
    return { sessionId, turn: turn.index, trigger: triggerOf(turn.trigger), recorded: sideOf(turn.completed.output), ...replayedSide(turn) }
  }
  return null
}

const triggerOf = (trigger: Trigger): TurnTrigger => {
  switch (trigger.type) {
    case 'start':
      return { kind: 'start' }
    case 'message':
      return { kind: 'message', text: triggerText(trigger) }
    case 'event':
      return { kind: 'event', name: trigger.event.name }
    default:
      return { kind: 'timer' }
  }
}

const sideOf = (output: Extract<SessionEvent, { type: 'TurnCompleted' }>['data']['output']): TurnSide => ({
  said: output.messages.slice(0, REPLAY_LIMITS.saidShown).map((message) => sentText(message) ?? `(${message.type})`),
  functions: output.functions.map((fn) => fn.type),
  waitsAt: output.state.waitingAt?.nodeId ?? null,
  status: output.status,
})

function replayedSide(turn: ReplayedTurn): Pick<DifferingSession, 'replayed' | 'missing'> {
  const { replayed } = turn
  // A call the session never made would have to be made: a replay calls nothing.
  if (replayed && 'calling' in replayed) return { replayed: null, missing: { reason: 'calls_outside', nodeId: replayed.calling } }
  if (!replayed || replayed.type !== 'TurnCompleted') return { replayed: null, missing: { reason: replayed?.type === 'TurnFailed' ? 'fails' : 'answers_nothing' } }
  return { replayed: sideOf(replayed.data.output) }
}

/**
 * Plays requested replays in the background: each round advances the oldest unfinished replay of
 * each organization by a batch (one replay per tenant at a time, tenants in turn), recording the
 * batch's differing sessions. A batch recorded twice (two runners, a restart) counts once.
 */
export class ReplayRunner {
  private timer?: NodeJS.Timeout
  private running?: Promise<void>
  private stopped = false

  private readonly db: DbOrTrx
  private readonly ctx: CommandContext
  private readonly flows: FlowVersions
  private readonly logger: Logger
  private readonly intervalMs: number

  constructor(db: DbOrTrx, ctx: CommandContext, flows: FlowVersions, logger: Logger, intervalMs = 1000) {
    this.db = db
    this.ctx = ctx
    this.flows = flows
    this.logger = logger
    this.intervalMs = intervalMs
  }

  start(): void {
    this.stopped = false
    this.timer ??= setInterval(() => {
      this.running ??= this.round()
        .then(() => {})
        .catch((error: unknown) => this.logger.error({ err: error }, 'a round of replays failed'))
        .finally(() => (this.running = undefined))
    }, this.intervalMs)
  }

  /**
   * Stops after the batch in flight, waiting for it at most STOP_WAIT_MS: a shutdown never waits
   * on a replay, and a batch it cuts short is played again, its progress recorded once.
   */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
    if (!this.running) return
    let waited: NodeJS.Timeout | undefined
    const cutShort = new Promise<'cut short'>((resolve) => (waited = setTimeout(resolve, STOP_WAIT_MS, 'cut short')))
    const outcome = await Promise.race([this.running, cutShort])
    clearTimeout(waited)
    if (outcome === 'cut short') this.logger.warn({ waitedMs: STOP_WAIT_MS }, 'replays stopped with a batch still in flight; it is played again')
  }

  /** Advances each organization's oldest unfinished replay by a batch, round after round, until none is left or the runner stops; answers how many batches it recorded. */
  async round(): Promise<number> {
    let batches = 0
    for (;;) {
      const waiting = await nextReplays(this.db, REPLAYS_PER_ROUND)
      if (waiting.length === 0) return batches
      let advanced = 0
      for (const { replayId } of waiting) {
        if (this.stopped) return batches
        // A replay that fails (its store read, its append) is tried again next round; the others go on.
        try {
          await this.advance(replayId)
          advanced++
          batches++
        } catch (error) {
          this.logger.error({ err: error, replayId }, 'a batch of a replay failed; it is tried again')
        }
        // Playing is CPU alone: between batches the process serves everything else.
        await setImmediate()
      }
      if (advanced === 0) return batches
    }
  }

  private async advance(replayId: string): Promise<void> {
    const { state } = await foldStream(this.ctx.store, replay, replayStream(replayId))
    if (state.status !== 'running') return
    const from = state.checked
    const batch = state.sessionIds.slice(from, from + BATCH)
    const differing: DifferingSession[] = []
    for (const sessionId of batch) {
      const found = await firstDifference(this.ctx.store, this.flows, state, sessionId)
      if (found) differing.push(found)
    }
    const result = await handleCommand(this.ctx.store, replay, replayStream(replayId), {
      type: 'RecordReplayProgress',
      data: { replayId, from, differing, played: batch.length, now: this.ctx.now().toISOString() },
    }, this.ctx.metadata)
    // The next round chooses from the read model: it must see this batch.
    await awaitReadModels(this.ctx, result)
  }
}
