import { session, type Session, type SessionEvent } from '../domain/session.js'
import type { Trigger } from '../domain/turn.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { SessionFlowRef } from './flow-versions.js'
import type { RunnableFlow } from './interpreter.js'
import { playTurn, type Interpreter } from './worker.js'

export type FlowLoader = (session: SessionFlowRef) => Promise<RunnableFlow | string>

/** What a recorded turn says of its inputs besides the session's events before it. */
export type TurnRecord = Pick<Extract<SessionEvent, { type: 'TurnCompleted' }>['data'], 'messageId' | 'completedAt' | 'timeZone' | 'aiConnections' | 'output'>

/** One recorded turn, produced again. */
export interface ReplayedTurn {
  /** 0 for the session's first turn, then one more per turn. */
  index: number
  recorded: RecordedEvent
  completed: TurnRecord
  /** What the turn answered. */
  trigger: Trigger
  /** What the worker would append instead; `calling` when it would have to call outside first, which replay never does. */
  replayed: SessionEvent | { calling: string } | null
}

const asSessionEvent = (recorded: RecordedEvent): SessionEvent => ({ type: recorded.type, data: recorded.data }) as SessionEvent

/**
 * Every recorded turn of a session produced again, in order: from the state the worker folded
 * before the turn (the recorded events before it), the trigger it answered, its recorded
 * `completedAt` as the clock, its recorded `timeZone`, AI connections and the branches its split
 * nodes drew (`choices`), exactly as the worker produces it (`playTurn`, then the decider). With
 * `loadFlow` answering the recorded version, a faithful record is produced again; answering another
 * definition, the first turn that differs is where it would change the conversation.
 */
export async function* replayedTurns(events: readonly RecordedEvent[], loadFlow: FlowLoader, interpret: Interpreter): AsyncGenerator<ReplayedTurn> {
  let state: Session = session.initialState
  let index = 0
  for (const recorded of events) {
    const event = asSessionEvent(recorded)
    if (event.type === 'TurnCompleted' && state.status !== 'none') {
      const trigger = state.pending[0]?.trigger ?? { type: 'start' }
      yield { index: index++, recorded, completed: event.data, trigger, replayed: await replayTurn(state, event.data, loadFlow, interpret) }
    }
    state = session.evolve(state, event)
  }
}

/** The event a replayed turn is compared by: what the worker appends, or null for a call it cannot make. */
export const comparable = (turn: ReplayedTurn): SessionEvent | null => (turn.replayed && 'calling' in turn.replayed ? null : turn.replayed)

/**
 * What the worker would append for the oldest pending trigger at `completedAt` in `timeZone`,
 * with the recorded AI connections, taking the recorded choices; `null` when it would append nothing.
 */
async function replayTurn(state: Session, recorded: TurnRecord, loadFlow: FlowLoader, interpret: Interpreter): Promise<SessionEvent | { calling: string } | null> {
  const { messageId, completedAt, timeZone, aiConnections } = recorded
  if (state.status === 'none') return null
  const next = state.pending[0]
  if (!next || next.messageId !== messageId) return null
  const flow = await loadFlow(state)
  const output = playTurn(interpret, flow, state, next, new Date(completedAt), { timeZone, aiConnections, choices: recorded.output.choices })
  // A call the record lacks would have to be made: replay calls nothing, so the turn is not reproduced.
  if (output.status === 'calling') return { calling: output.nodeId }
  const turn = { sessionId: state.sessionId, messageId, output, now: completedAt, ...(timeZone !== undefined && { timeZone }), ...(aiConnections !== undefined && { aiConnections }) }
  const [event] = session.decide({ type: 'CompleteTurn', data: turn }, state)
  return event ?? null
}
