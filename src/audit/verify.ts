import { session, type Session, type SessionEvent } from '../domain/session.js'
import type { RecordedEvent } from '../eventstore/port.js'
import type { SessionFlowRef } from '../engine/flow-versions.js'
import type { RunnableFlow } from '../engine/interpreter.js'
import { playTurn, type Interpreter } from '../engine/worker.js'
import { diffJson, type Difference } from './json-diff.js'

/** A recorded turn that the interpreter does not produce again from the recorded inputs. */
export interface Divergence {
  sessionId: string
  eventId: string
  revision: number
  messageId: string
  /** Recorded (left) against replayed (right), over the event's `{type, data}`. */
  differences: Difference[]
}

export interface SessionVerdict {
  sessionId: string
  /** Recorded turns checked. */
  turns: number
  divergences: Divergence[]
}

export type FlowLoader = (session: SessionFlowRef) => Promise<RunnableFlow | string>

/** What a recorded turn says of its inputs besides the session's events before it. */
type TurnRecord = Pick<Extract<SessionEvent, { type: 'TurnCompleted' }>['data'], 'messageId' | 'completedAt' | 'timeZone' | 'aiConnections' | 'output'>

const asSessionEvent = (recorded: RecordedEvent): SessionEvent => ({ type: recorded.type, data: recorded.data }) as SessionEvent

/**
 * Replays every recorded turn of one session: from the state the worker folded before the turn
 * (the recorded events before it), with the session's recorded flow version, the trigger it
 * answered, its recorded `completedAt` as the clock, its recorded `timeZone` and AI connections and the branches its
 * split nodes drew (`choices`), the turn is produced again exactly as the worker produces it
 * (`playTurn`, then the decider) and compared with what was recorded.
 */
export async function verifySession(sessionId: string, events: readonly RecordedEvent[], loadFlow: FlowLoader, interpret: Interpreter): Promise<SessionVerdict> {
  const verdict: SessionVerdict = { sessionId, turns: 0, divergences: [] }
  let state: Session = session.initialState
  for (const recorded of events) {
    const event = asSessionEvent(recorded)
    if (event.type === 'TurnCompleted') {
      verdict.turns++
      const replayed = await replayTurn(state, event.data, loadFlow, interpret)
      const differences = diffJson({ type: event.type, data: event.data }, replayed)
      if (differences.length > 0) {
        verdict.divergences.push({ sessionId, eventId: recorded.id, revision: Number(recorded.revision), messageId: event.data.messageId, differences })
      }
    }
    state = session.evolve(state, event)
  }
  return verdict
}

/**
 * What the worker would append for the oldest pending trigger at `completedAt` in `timeZone`,
 * with the recorded AI connections, taking the recorded choices; `null` when it would append nothing.
 */
async function replayTurn(state: Session, recorded: TurnRecord, loadFlow: FlowLoader, interpret: Interpreter): Promise<SessionEvent | null> {
  const { messageId, completedAt, timeZone, aiConnections } = recorded
  if (state.status === 'none') return null
  const next = state.pending[0]
  if (!next || next.messageId !== messageId) return null
  const flow = await loadFlow(state)
  const output = playTurn(interpret, flow, state, next, new Date(completedAt), { timeZone, aiConnections, choices: recorded.output.choices })
  // A call the record lacks would have to be made: replay calls nothing, so the turn is not reproduced.
  if (output.status === 'calling') return null
  const turn = { sessionId: state.sessionId, messageId, output, now: completedAt, ...(timeZone !== undefined && { timeZone }), ...(aiConnections !== undefined && { aiConnections }) }
  const [event] = session.decide({ type: 'CompleteTurn', data: turn }, state)
  return event ?? null
}
