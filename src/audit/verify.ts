import type { RecordedEvent } from '../eventstore/port.js'
import { comparable, replayedTurns, type FlowLoader } from '../engine/replayed-turns.js'
import type { Interpreter } from '../engine/worker.js'
import { diffJson, type Difference } from './json-diff.js'

export type { FlowLoader }

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

/**
 * Replays every recorded turn of one session as the worker produced it (`replayedTurns`), with the
 * flow `loadFlow` answers (the session's recorded version, for an audit), and compares each with
 * what was recorded.
 */
export async function verifySession(sessionId: string, events: readonly RecordedEvent[], loadFlow: FlowLoader, interpret: Interpreter): Promise<SessionVerdict> {
  const verdict: SessionVerdict = { sessionId, turns: 0, divergences: [] }
  for await (const turn of replayedTurns(events, loadFlow, interpret)) {
    verdict.turns++
    const { recorded, completed } = turn
    const differences = diffJson({ type: recorded.type, data: recorded.data }, comparable(turn))
    if (differences.length > 0) verdict.divergences.push({ sessionId, eventId: recorded.id, revision: Number(recorded.revision), messageId: completed.messageId, differences })
  }
  return verdict
}

