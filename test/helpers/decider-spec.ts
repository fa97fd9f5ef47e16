import { inspect, isDeepStrictEqual } from 'node:util'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Test } from 'tap'
import type { Decider, DomainEvent } from '../../src/domain/decider.js'
import { assertMatchesSchema } from '../../src/commands/handle.js'

/**
 * Given/when/then specs of a decider, after Emmett's `DeciderSpecification`, as tap assertions:
 *
 *   const { given } = spec(t, session)
 *   given(started).when(receive()).then([received()], 'an active session takes a message')
 *   given(started, received()).when(receive()).thenNothing('the same Idempotency-Key again')
 *   given().when(receive()).thenRejects(NotFoundError, 'no such session')
 *
 * `when` runs what the command path runs, minus the store: the given events (each checked against
 * its schema) folded by the real `evolve`, the real `decide`, every decided event checked against
 * its schema as an append checks it, and the decided events folded on. Given events, states and
 * the command are frozen first, so a `decide` or `evolve` that mutates its input fails the case.
 * Each outcome is one assertion, named by its situation; a failing one names the given events, the
 * command and the first difference, with every value escaped.
 */
export function spec<Command, State, Event extends DomainEvent>(t: Test, decider: Decider<Command, State, Event>) {
  return {
    given: (...history: Event[]) => ({
      when: (command: Command) => new Outcome(t, decider, history, command),
    }),
  }
}

type ErrorClass = abstract new (...args: never[]) => Error
/** What a rejection must be: an error class, a pattern of its message, or both. */
export type ErrorMatcher = ErrorClass | RegExp | { type: ErrorClass; message: RegExp }

class Outcome<Command, State, Event extends DomainEvent> {
  readonly #t: Test
  readonly #context: string
  readonly #result: { events: Event[]; state: State } | { error: unknown; state: State } | { broken: string; state: State }

  constructor(t: Test, decider: Decider<Command, State, Event>, history: Event[], command: Command) {
    this.#t = t
    this.#context = `given [${history.map((e) => e.type).join(', ')}] when ${commandType(command)}`
    this.#result = run(decider, history, command)
  }

  /** Decides exactly `expected`; returns the state after them, for checks of `evolve`. */
  then(expected: Event[], situation?: string): State {
    const result = this.#result
    if ('events' in result && isDeepStrictEqual(result.events, expected)) this.#pass(situation)
    else if ('events' in result) {
      const decided = types(result.events)
      const difference = decided === types(expected) ? `, first at ${firstDifference(expected, result.events, '')}` : ''
      this.#fail(situation, `expected ${types(expected)} but decided ${decided}${difference}`, { expected, decided: result.events })
    } else this.#failOther(situation, `expected ${types(expected)}`, result)
    return result.state
  }

  /** Decides no event: the command is a no-op on this state (a retry, a repeat, nothing to change). */
  thenNothing(situation?: string): State {
    return this.then([], situation)
  }

  /** `decide` throws, or an event it decides breaks its schema (which the append refuses), as `matcher` says. */
  thenRejects(matcher: ErrorMatcher, situation?: string): void {
    const result = this.#result
    const wanted = `expected a rejection (${describeMatcher(matcher)})`
    if ('events' in result) this.#fail(situation, `${wanted} but decided ${types(result.events)}`, { decided: result.events })
    else if ('broken' in result) this.#failOther(situation, wanted, result)
    else if (matches(matcher, result.error)) this.#pass(situation)
    else this.#fail(situation, `${wanted} but got ${describeError(result.error)}`, { error: result.error })
  }

  #pass(situation: string | undefined) {
    this.#t.pass(escape(situation ?? this.#context))
  }

  #fail(situation: string | undefined, problem: string, details: Record<string, unknown>) {
    const extra = Object.fromEntries(Object.entries(details).map(([key, value]) => [key, show(value, Infinity)]))
    // Point at the spec's line, not at this kit.
    extra.stack = (new Error().stack ?? '').split('\n').slice(1).filter((line) => !line.includes('decider-spec.ts')).join('\n')
    this.#t.fail(escape(`${situation ? `${situation}: ` : ''}${this.#context}: ${problem}`), extra)
  }

  #failOther(situation: string | undefined, wanted: string, result: { error: unknown } | { broken: string }) {
    if ('broken' in result) this.#fail(situation, `${wanted} but ${result.broken}`, {})
    else this.#fail(situation, `${wanted} but decide threw ${describeError(result.error)}`, { error: result.error })
  }
}

function run<Command, State, Event extends DomainEvent>(decider: Decider<Command, State, Event>, history: Event[], command: Command) {
  let state = deepFreeze(decider.initialState)
  for (const [index, event] of history.entries()) {
    try {
      assertMatchesSchema(deepFreeze(event), decider.eventSchemas)
      state = deepFreeze(decider.evolve(state, event))
    } catch (error) {
      return { broken: `given event ${index} (${event.type}) fails: ${describeError(error)}`, state }
    }
  }
  let events: Event[]
  try {
    events = decider.decide(deepFreeze(command), state)
    for (const event of events) assertMatchesSchema(event, decider.eventSchemas)
  } catch (error) {
    return { error, state }
  }
  try {
    return { events, state: events.reduce((folded, event) => deepFreeze(decider.evolve(folded, deepFreeze(event))), state) }
  } catch (error) {
    return { broken: `evolve of the decided events threw ${describeError(error)}`, state }
  }
}

/** A table of examples of a pure function: each row names its situation, the arguments and the result (or `rejects(…)`). */
export function examples<Args extends unknown[], Result>(t: Test, fn: (...args: Args) => Result, rows: readonly (readonly [situation: string, args: Args, expected: Result | Rejects])[]): void {
  for (const [situation, args, expected] of rows) {
    const call = `${fn.name}(${args.map((arg) => show(arg)).join(', ')})`
    let actual: { value: Result } | { error: unknown }
    try {
      actual = { value: fn(...args) }
    } catch (error) {
      actual = { error }
    }
    if (expected instanceof Rejects) {
      if ('error' in actual && matches(expected.matcher, actual.error)) t.pass(escape(situation))
      else t.fail(escape(`${situation}: ${call} should throw (${describeMatcher(expected.matcher)}) but ${'error' in actual ? `threw ${describeError(actual.error)}` : `returned ${show(actual.value)}`}`))
    } else if ('value' in actual && isDeepStrictEqual(actual.value, expected)) t.pass(escape(situation))
    else {
      const outcome = 'value' in actual ? `returned ${show(actual.value)}, first difference at ${firstDifference(expected, actual.value, '')}` : `threw ${describeError(actual.error)}`
      t.fail(escape(`${situation}: ${call} ${outcome}; expected ${show(expected)}`))
    }
  }
}

class Rejects {
  readonly matcher: ErrorMatcher
  constructor(matcher: ErrorMatcher) {
    this.matcher = matcher
  }
}
/** The expected outcome of an example that throws. */
export const rejects = (matcher: ErrorMatcher) => new Rejects(matcher)

/** What `schema` accepts, as a function for `examples`. */
export function accepts(schema: TSchema): (value: unknown) => boolean {
  const check = TypeCompiler.Compile(schema)
  return function accepts(value) {
    return check.Check(value)
  }
}

/** The state after `events`, folded by the decider: for commands that carry another aggregate's state. */
export const fold = <State, Event extends DomainEvent>(decider: Decider<never, State, Event>, events: readonly Event[]): State => events.reduce(decider.evolve, decider.initialState)

const isErrorClass = (matcher: ErrorMatcher): matcher is ErrorClass => typeof matcher === 'function'

function matches(matcher: ErrorMatcher, error: unknown): boolean {
  if (isErrorClass(matcher)) return error instanceof matcher
  const message = error instanceof Error ? error.message : String(error)
  if (matcher instanceof RegExp) return matcher.test(message)
  return error instanceof matcher.type && matcher.message.test(message)
}

function describeMatcher(matcher: ErrorMatcher): string {
  if (isErrorClass(matcher)) return matcher.name
  if (matcher instanceof RegExp) return `message ${String(matcher)}`
  return `${matcher.type.name} with message ${String(matcher.message)}`
}

const describeError = (error: unknown): string => (error instanceof Error ? `${error.name}: ${show(error.message)}` : show(error))

const commandType = (command: unknown): string =>
  typeof command === 'object' && command !== null && 'type' in command && typeof command.type === 'string' ? command.type : show(command)

const types = (events: readonly DomainEvent[]) => `[${events.map((e) => e.type).join(', ')}]`

/** Where `actual` first departs from `expected` (`[0].data.expiresAt`), with both values there. */
function firstDifference(expected: unknown, actual: unknown, path: string): string {
  if (isDeepStrictEqual(expected, actual)) return '(none)'
  const bothArrays = Array.isArray(expected) && Array.isArray(actual)
  const bothObjects = isObject(expected) && isObject(actual) && !Array.isArray(expected) && !Array.isArray(actual)
  if (bothArrays || bothObjects) {
    const keys = [...new Set([...Object.keys(expected as object), ...Object.keys(actual as object)])]
    for (const key of keys) {
      const wanted = (expected as Record<string, unknown>)[key]
      const found = (actual as Record<string, unknown>)[key]
      if (!isDeepStrictEqual(wanted, found)) return firstDifference(wanted, found, bothArrays ? `${path}[${key}]` : `${path}.${key}`)
    }
  }
  return `${path || '(top)'}: expected ${show(expected)}, got ${show(actual)}`
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null

/** One line of printable text for any value: control, format and line-separator characters escaped, long output cut. */
function show(value: unknown, maxLength = 300): string {
  const text = inspect(value, { depth: 8, breakLength: Infinity, compact: true, maxArrayLength: 20, maxStringLength: 200 })
  return escape(text.length > maxLength ? `${text.slice(0, maxLength)}…` : text)
}

/** Escapes what could break a TAP line (U+2028 and U+2029 drop every later assertion of the subtest) or hide in it. */
const escape = (text: string): string => text.replace(/[\p{C}\p{Zl}\p{Zp}]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`)

function deepFreeze<T>(value: T): T {
  if (Array.isArray(value) || (isObject(value) && Object.getPrototypeOf(value) === Object.prototype)) {
    if (Object.isFrozen(value)) return value
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}
