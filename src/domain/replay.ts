import { Type, type Static } from '@sinclair/typebox'
import { ConflictError } from '../errors.js'
import type { Decider } from './decider.js'
import { FlowDefinition } from './flow-definition.js'
import { Timestamp, Uuid } from './schemas.js'

/**
 * Replays: real sessions of a published version played again against the draft, to see before a
 * publish where the bot would now answer differently. One stream per replay: the request (with the
 * draft as it was then and the sessions chosen), then its progress in batches, then its end.
 */
export const replayStream = (replayId: string) => `replay-${replayId}`

export const REPLAY_LIMITS = {
  /** Sessions one replay plays. */
  sessions: 5000,
  /** Sessions chosen when the request names no number. */
  defaultSessions: 200,
  /** Replays of one organization not yet finished; one runs at a time, the others wait their turn. */
  unfinishedPerOrganization: 3,
  /** Differing sessions a replay keeps in full; past them it counts. */
  differingKept: 1000,
  /** Messages of a turn a side of the comparison shows. */
  saidShown: 20,
} as const

export const SessionStatusChoice = Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('timeout'), Type.Literal('error')])

/** Which sessions of the version: the newest `last`, started in [from, to), of a status. */
export const ReplaySelection = Type.Object({
  last: Type.Optional(Type.Integer({ minimum: 1, maximum: REPLAY_LIMITS.sessions })),
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  status: Type.Optional(SessionStatusChoice),
})
export type ReplaySelection = Static<typeof ReplaySelection>

/** What one side of a turn did, as a person compares it. */
export const TurnSide = Type.Object({
  said: Type.Array(Type.String()),
  /** `transfer` or `finish`, when the turn asked for one. */
  functions: Type.Array(Type.String()),
  waitsAt: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
})
export type TurnSide = Static<typeof TurnSide>

/** What a turn answered: the session's start, the contact's message (its words), an outside event, a timer. */
export const TurnTrigger = Type.Union([
  Type.Object({ kind: Type.Literal('start') }),
  Type.Object({ kind: Type.Literal('message'), text: Type.String() }),
  Type.Object({ kind: Type.Literal('event'), name: Type.String() }),
  Type.Object({ kind: Type.Literal('timer') }),
])
export type TurnTrigger = Static<typeof TurnTrigger>

/** Why the draft's side of a turn is missing: it would call outside at a node (a replay calls nothing), fail the turn, or answer nothing. */
export const MissingTurn = Type.Union([
  Type.Object({ reason: Type.Literal('calls_outside'), nodeId: Type.String() }),
  Type.Object({ reason: Type.Literal('fails') }),
  Type.Object({ reason: Type.Literal('answers_nothing') }),
])
export type MissingTurn = Static<typeof MissingTurn>

/** A session whose turns the draft would change: its first differing turn, side by side. */
export const DifferingSession = Type.Object({
  sessionId: Uuid,
  /** 0: the session's start; then one per trigger the session answered. */
  turn: Type.Integer({ minimum: 0 }),
  trigger: TurnTrigger,
  recorded: TurnSide,
  /** What the draft does instead; null when there is nothing to show (`missing` says why). */
  replayed: Type.Union([TurnSide, Type.Null()]),
  missing: Type.Optional(MissingTurn),
})
export type DifferingSession = Static<typeof DifferingSession>

const ReplayRequested = Type.Object({
  replayId: Uuid,
  flowId: Uuid,
  workspaceId: Uuid,
  organizationId: Uuid,
  /** The published version whose sessions are replayed. */
  version: Type.Integer({ minimum: 1 }),
  /** The draft they are replayed against, as it was when asked. */
  draftVersion: Type.Integer({ minimum: 1 }),
  definition: FlowDefinition,
  selection: ReplaySelection,
  sessionIds: Type.Array(Uuid, { maxItems: REPLAY_LIMITS.sessions }),
  requestedAt: Timestamp,
})

/** Sessions `from` to `checked` (exclusive) played; those that differ among them. */
const ReplayProgressed = Type.Object({
  replayId: Uuid,
  from: Type.Integer({ minimum: 0 }),
  checked: Type.Integer({ minimum: 0 }),
  differing: Type.Array(DifferingSession),
  /** Differing sessions found past REPLAY_LIMITS.differingKept: counted, not kept. */
  pastKept: Type.Optional(Type.Integer({ minimum: 1 })),
  at: Timestamp,
})

const ReplayFinished = Type.Object({ replayId: Uuid, finishedAt: Timestamp })

export type ReplayEvent =
  | { type: 'ReplayRequested'; data: Static<typeof ReplayRequested> }
  | { type: 'ReplayProgressed'; data: Static<typeof ReplayProgressed> }
  | { type: 'ReplayFinished'; data: Static<typeof ReplayFinished> }

export type ReplayRequest = Static<typeof ReplayRequested>

export type ReplayCommand =
  | { type: 'RequestReplay'; data: Omit<ReplayRequest, 'requestedAt'> & { now: string } }
  /** The sessions from `from` on were played; a batch another runner recorded first is taken as done. */
  | { type: 'RecordReplayProgress'; data: { replayId: string; from: number; differing: DifferingSession[]; played: number; now: string } }

export type Replay =
  | { status: 'none' }
  | (ReplayRequest & {
      status: 'running' | 'finished'
      checked: number
      /** Every differing session found, the first REPLAY_LIMITS.differingKept of them in `differing`. */
      differingCount: number
      differing: DifferingSession[]
      finishedAt: string | null
    })

export const replay: Decider<ReplayCommand, Replay, ReplayEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { ReplayRequested, ReplayProgressed, ReplayFinished },

  decide(command, state) {
    switch (command.type) {
      case 'RequestReplay': {
        if (state.status !== 'none') throw new ConflictError(`replay ${command.data.replayId} exists already`)
        const { now, ...request } = command.data
        const requested: ReplayEvent = { type: 'ReplayRequested', data: { ...request, requestedAt: now } }
        // Nothing to play: the replay is done as soon as it is asked.
        if (request.sessionIds.length === 0) return [requested, { type: 'ReplayFinished', data: { replayId: request.replayId, finishedAt: now } }]
        return [requested]
      }
      case 'RecordReplayProgress': {
        const { replayId, from, differing, played, now } = command.data
        if (state.status !== 'running' || from !== state.checked) return []
        const checked = Math.min(from + played, state.sessionIds.length)
        const kept = differing.slice(0, Math.max(0, REPLAY_LIMITS.differingKept - state.differing.length))
        const past = differing.length - kept.length
        const events: ReplayEvent[] = [{ type: 'ReplayProgressed', data: { replayId, from, checked, differing: kept, ...(past > 0 && { pastKept: past }), at: now } }]
        if (checked === state.sessionIds.length) events.push({ type: 'ReplayFinished', data: { replayId, finishedAt: now } })
        return events
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ReplayRequested':
        return { ...event.data, status: 'running', checked: 0, differingCount: 0, differing: [], finishedAt: null }
      case 'ReplayProgressed': {
        if (state.status === 'none') return state
        const { checked, differing, pastKept = 0 } = event.data
        return { ...state, checked, differing: [...state.differing, ...differing], differingCount: state.differingCount + differing.length + pastKept }
      }
      case 'ReplayFinished':
        return state.status === 'none' ? state : { ...state, status: 'finished', finishedAt: event.data.finishedAt }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
