import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { Decider, DomainEvent } from '../domain/decider.js'
import { ConflictError } from '../errors.js'
import { closedSchema } from './closed-schema.js'
import { withStreamLock } from '../eventstore/stream-lock.js'
import { foldStream, keptState, rememberFolded, type FoldedStream } from '../eventstore/stream-state.js'
import { newId } from '../ids.js'
import { WrongExpectedVersionError, type EventMetadata, type EventStore, type Position } from '../eventstore/port.js'

export interface CommandResult<State, Event> {
  /** The state after the new events. */
  state: State
  events: Event[]
  /** Where the last new event landed; undefined when the command decided nothing. */
  position: Position | undefined
  stream: string
}

const MAX_ATTEMPTS = 10
/** An event schema's compiled checks: as written, and closed to properties it does not name (where the schema alone can say so). */
interface EventChecks {
  open: TypeCheck<TSchema>
  closed: TypeCheck<TSchema> | undefined
}
const compiled = new WeakMap<TSchema, EventChecks>()

function checksOf(schema: TSchema): EventChecks {
  let checks = compiled.get(schema)
  if (!checks) {
    const closed = closedSchema(schema)
    compiled.set(schema, (checks = { open: TypeCompiler.Compile(schema), closed: closed && TypeCompiler.Compile(closed) }))
  }
  return checks
}

/** An event its decider's schema refuses: a bug, or input a validator let through; never worth a retry. */
export class EventSchemaError extends Error {
  override readonly name = 'EventSchemaError'
}

/** Throws unless the event matches its schema and carries nothing the schema does not name: the check of every append. */
export function assertMatchesSchema(event: DomainEvent, schemas: Record<string, TSchema>): void {
  const schema = schemas[event.type]
  if (!schema) throw new Error(`no schema for event type ${event.type}`)
  const { open, closed } = checksOf(schema)
  if (closed?.Check(event.data)) return
  if (!open.Check(event.data)) {
    const first = open.Errors(event.data).First()
    throw new EventSchemaError(`event ${event.type} does not match its schema at ${first?.path}: ${first?.message}`)
  }
  // Events are forever: a property no schema names (a spread of the wrong object) must not slip in.
  if (closed || !Value.Equal(Value.Clean(schema, Value.Clone(event.data)), event.data)) {
    throw new EventSchemaError(`event ${event.type} carries properties its schema does not name`)
  }
}

/** A stream's current state: its events folded by the decider. */
export async function loadState<Command, State, Event extends DomainEvent>(store: EventStore, decider: Decider<Command, State, Event>, stream: string): Promise<State> {
  return (await foldStream(store, decider, stream)).state
}

/** Decide only on this revision of the stream (`no_stream`: before its first event). */
export type OnlyAt = bigint | 'no_stream'

/**
 * Load → fold → decide → append with the expected revision; when this process kept the stream's
 * state, first without the load (see decideOnKeptState). On a concurrent write to the same
 * stream it decides again on the fresh state, a bounded number of times. With `onlyAt` (a caller
 * whose own checks read the stream at that revision) it decides once, and throws
 * WrongExpectedVersionError when the stream is elsewhere.
 */
export async function handleCommand<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  command: Command,
  metadata: EventMetadata,
  options: { onlyAt?: OnlyAt } = {},
): Promise<CommandResult<State, Event>> {
  return withStreamLock(stream, () => decideAndAppend(store, decider, stream, command, metadata, options.onlyAt))
}

async function decideAndAppend<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  command: Command,
  metadata: EventMetadata,
  onlyAt: OnlyAt | undefined,
): Promise<CommandResult<State, Event>> {
  if (onlyAt === undefined) {
    const optimistic = await decideOnKeptState(store, decider, stream, command, metadata)
    if (optimistic !== undefined) return optimistic
  }
  for (let attempt = 1; ; attempt++) {
    const current = await foldStream(store, decider, stream)
    const at = current.revision ?? 'no_stream'
    if (onlyAt !== undefined && at !== onlyAt) throw new WrongExpectedVersionError(stream, onlyAt, at)
    const result = await decideOnState(store, decider, stream, current, command, metadata)
    if (result !== 'conflict') return result
    if (onlyAt !== undefined) throw new WrongExpectedVersionError(stream, onlyAt, 'unknown')
    if (attempt >= MAX_ATTEMPTS) throw new ConflictError(`${stream} is being changed concurrently; try again`)
    // Another process wrote the stream: back off a little, with jitter, before deciding again.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt))
  }
}

/**
 * The common case without a read: decides on the state this process kept for the stream and
 * appends at its revision, which the store refuses if another process wrote meanwhile. Only new
 * events are believed this way. A refusal or a no-op decided on a kept state could be an artefact
 * of an event it has not seen (a message elsewhere moved the expiry on), so those, like a
 * conflict, are decided again on a fresh read (undefined).
 */
async function decideOnKeptState<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  command: Command,
  metadata: EventMetadata,
): Promise<CommandResult<State, Event> | undefined> {
  const kept = keptState(store, decider, stream)
  if (!kept) return undefined
  let events: Event[]
  try {
    events = decider.decide(command, kept.state)
  } catch {
    return undefined
  }
  if (events.length === 0) return undefined
  const result = await appendDecided(store, decider, stream, kept, events, metadata)
  return result === 'conflict' ? undefined : result
}

/**
 * One try of the command path: decides `command` on the stream as folded in `current`, checks the
 * events against their schemas and appends them at the revision folded; 'conflict' when another
 * writer came first (the caller decides whether and when to try again). `eventId` names each new
 * event: a fresh id, unless the caller derives it (the engine's turns, so a replay makes the same).
 */
export async function decideOnState<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  current: FoldedStream<State>,
  command: Command,
  metadata: EventMetadata,
  eventId: (event: Event, index: number) => string = () => newId(),
): Promise<CommandResult<State, Event> | 'conflict'> {
  const events = decider.decide(command, current.state)
  if (events.length === 0) return { state: current.state, events, position: undefined, stream }
  return appendDecided(store, decider, stream, current, events, metadata, eventId)
}

/** Appends `events`, decided on `current`, at its revision; 'conflict' when another writer came first. */
async function appendDecided<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  stream: string,
  current: FoldedStream<State>,
  events: Event[],
  metadata: EventMetadata,
  eventId: (event: Event, index: number) => string = () => newId(),
): Promise<CommandResult<State, Event> | 'conflict'> {
  for (const event of events) assertMatchesSchema(event, decider.eventSchemas)
  try {
    const { position, nextRevision } = await store.append(
      stream,
      events.map((event, index) => ({ id: eventId(event, index), type: event.type, data: event.data, metadata })),
      { expectedRevision: current.revision ?? 'no_stream' },
    )
    const state = events.reduce(decider.evolve, current.state)
    rememberFolded(store, decider, stream, { state, revision: nextRevision })
    return { state, events, position, stream }
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return 'conflict'
    throw error
  }
}
