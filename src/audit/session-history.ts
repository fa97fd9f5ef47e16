import { session, sessionStream, type Session, type SessionEvent } from '../domain/session.js'
import { NotFoundError } from '../errors.js'
import type { EventStore, RecordedEvent } from '../eventstore/port.js'

/** A session's recorded events and the state they fold to; 404 unless it belongs to `workspaceId`. */
export async function readSessionHistory(
  store: EventStore,
  workspaceId: string,
  sessionId: string,
): Promise<{ recorded: RecordedEvent[]; state: Exclude<Session, { status: 'none' }> }> {
  const recorded = await store.readStream(sessionStream(sessionId))
  const state = recorded.reduce<Session>((s, e) => session.evolve(s, { type: e.type, data: e.data } as SessionEvent), session.initialState)
  if (state.status === 'none' || state.workspaceId !== workspaceId) throw new NotFoundError(`session ${sessionId} not found`)
  return { recorded, state }
}
