import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import { interpolator } from '../../src/domain/interpolate.js'
import type { CheckContext, Segment, Visit, WaitTimer, WorkspaceCatalog } from '../../src/domain/nodes/node-type.js'
import type { HttpCallRequest, RecordedCall } from '../../src/domain/outside-call.js'
import type { ConversationState, KanbanAction, ModelCall, TranscriptLine, TurnFunction, VariableValue } from '../../src/domain/turn.js'
import type { ConnectionAsUsed } from '../../src/domain/ai-connection.js'

/** The time of every recording visit (`visit.now()`), in milliseconds since the epoch: 2026-01-01T00:00:00Z. */
export const VISIT_NOW = Date.UTC(2026, 0, 1)

/** What a node did to the turn that visited it, in the order it did it. */
export type Effect =
  | { send: readonly OutgoingMessage[] }
  | { assign: string; value: VariableValue }
  | { warn: string }
  | { wait: number; timer?: WaitTimer }
  | 'stopWaiting'
  | { call: Omit<TurnFunction, 'timestamp'> }
  | { moveCard: Omit<KanbanAction, 'timestamp' | 'nodeId'> }
  | { callOutside: HttpCallRequest }
  | { waitForEvent: string; timeoutSeconds: number }
  | { choose: readonly { id: string; weight: number }[] }
  | { sendAsWritten: readonly OutgoingMessage[] }
  | { callModel: HttpCallRequest; connectionId: string }
  | { noteModelCall: Omit<ModelCall, 'nodeId'> }

/**
 * A `Visit` that records what a node does instead of running a turn, so a node type's `run` and
 * `resume` are specified alone: messages are recorded as written, templates read `variables`, and
 * calls outside and model calls get `answers` in order (none left: the call is not made yet), events are taken from
 * `kept`, and draws give the branch ids of `drawn` in order (none left: the first branch).
 */
export function recordingVisit(
  variables: Record<string, VariableValue> = {},
  card: ConversationState['card'] = null,
  answers: RecordedCall[] = [],
  kept: { name: string; data: Record<string, unknown> }[] = [],
  drawn: string[] = [],
  connections: Record<string, ConnectionAsUsed> = {},
  transcript: TranscriptLine[] = [],
) {
  const effects: Effect[] = []
  let issued = 0
  const scope = () => ({ system: { sessionId: 'session-1' }, variables })
  const visit: Visit = {
    nodeId: 'node',
    scope,
    send: (messages) => void effects.push({ send: messages }),
    sendAsWritten: (messages) => void effects.push({ sendAsWritten: messages }),
    interpolating: (use, options) => {
      const interpolate = interpolator(scope(), options)
      const result = use(interpolate.text)
      for (const path of interpolate.unknown) effects.push({ warn: `unknown variable {{${path}}}` })
      return result
    },
    assign: (name, value) => void effects.push({ assign: name, value }),
    warn: (warning) => void effects.push({ warn: warning }),
    wait: (retries, timer) => void effects.push(timer ? { wait: retries, timer } : { wait: retries }),
    stopWaiting: () => void effects.push('stopWaiting'),
    waitForEvent: (name, timeoutSeconds) => void effects.push({ waitForEvent: name, timeoutSeconds }),
    takeEvent: (name) => {
      const index = kept.findIndex((event) => event.name === name)
      return index < 0 ? undefined : { data: kept.splice(index, 1)[0]!.data }
    },
    call: (fn) => void effects.push({ call: fn }),
    moveCard: (action) => void effects.push({ moveCard: action }),
    callOutside: (request) => {
      effects.push({ callOutside: request })
      return answers.shift()
    },
    aiConnection: (id) => (Object.hasOwn(connections, id) ? connections[id] : undefined),
    callModel: (connectionId, request) => {
      effects.push({ callModel: request, connectionId })
      return answers.shift()
    },
    noteModelCall: (call) => void effects.push({ noteModelCall: call }),
    transcript: () => transcript,
    card,
    newId: () => `new-${++issued}`,
    now: () => VISIT_NOW,
    today: () => '2026-01-01',
    choose: (branches) => {
      effects.push({ choose: branches })
      return drawn.shift() ?? branches[0]!.id
    },
  }
  return { visit, effects }
}

/** The problems a node type's `check` reports on `data`, as `path: message`. */
export function checkProblems<Data>(check: (data: Data, context: CheckContext) => void, data: Data, catalog: WorkspaceCatalog, known: readonly string[] = []): string[] {
  const problems: string[] = []
  const report = (at: readonly Segment[], message: string) => void problems.push(`${at.join('.')}: ${message}`)
  check(data, { catalog, known: new Set(known), report })
  return problems
}

export const emptyCatalog: WorkspaceCatalog = { sectorIds: new Set(), pipelines: new Map(), variables: new Map() }
