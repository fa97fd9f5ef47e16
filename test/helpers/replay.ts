import type { Test } from 'tap'
import { verifySession } from '../../src/audit/verify.js'
import { sessionStream } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurnOrCall } from '../../src/engine/interpreter.js'
import type { EventStore } from '../../src/eventstore/port.js'

/** Replays every recorded turn of the sessions as `flowd audit verify` does, each checked to reproduce; answers the turns replayed. */
export async function replayedTurns(t: Test, store: EventStore, sessionIds: readonly string[]): Promise<number> {
  const flows = new FlowVersions(store)
  let turns = 0
  for (const id of sessionIds) {
    const verdict = await verifySession(id, await store.readStream(sessionStream(id)), (state) => flows.ofSession(state), runTurnOrCall)
    t.same(verdict.divergences, [], `session ${id} reproduces`)
    turns += verdict.turns
  }
  return turns
}
