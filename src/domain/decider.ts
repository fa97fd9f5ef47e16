import type { TSchema } from '@sinclair/typebox'

/** An event as the domain sees it: what happened, without store envelope. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type
  data: Data
}

/**
 * An aggregate as a pure decider: `decide` turns a command and the current state into new events
 * (or throws a typed error), `evolve` folds an event into the state. Neither does I/O, reads a
 * clock or makes ids: those arrive in the command.
 */
export interface Decider<Command, State, Event extends DomainEvent> {
  initialState: State
  decide(command: Command, state: State): Event[]
  evolve(state: State, event: Event): State
  /** Schema of each event type's data, checked before every append. */
  eventSchemas: { [Type in Event['type']]: TSchema }
}
