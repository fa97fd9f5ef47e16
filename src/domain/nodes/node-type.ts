import type { Static, TSchema } from '@sinclair/typebox'
import type { OutgoingMessage } from '../flow-definition.js'
import type { Field } from '../pipeline.js'
import type { VariableType } from '../variables.js'
import type { InterpolationOptions, Scope } from '../interpolate.js'
import type { HttpCallRequest, RecordedCall } from '../outside-call.js'
import type { ConversationState, InboundMessage, KanbanAction, ModelCall, TranscriptLine, TurnFunction, VariableValue } from '../turn.js'
import type { ConnectionAsUsed } from '../ai-connection.js'

/**
 * What one node type is: the schema of its `data`, its exits, the checks beyond its schema and how
 * the engine runs it. Each type is one module of this folder exporting these members, collected in
 * the `nodeTypes` registry (./index.ts). The editor imports the same modules for their schemas'
 * types, exits and limits; it never calls `check` or `run`, and its bundle leaves them out.
 */
export interface NodeType<Schema extends TSchema = TSchema> {
  /** The schema of the node's `data`. */
  schema: Schema
  /** The node's exits in the order the editor shows them; `data` may be a draft's, incomplete. */
  exits(data: Partial<Static<Schema>>): readonly Exit[]
  /** Runs the node when the conversation reaches it. */
  run(node: NodeOf<Schema>, visit: Visit): Step
  /** Handles a reply to a node that waits for one (its `run` answered `wait`). */
  resume?(node: NodeOf<Schema>, visit: Visit, retries: number, message: InboundMessage): Exclude<Step, 'complete'>
  /** Goes on from a wait that an outside event or its timer ended. */
  wake?(node: NodeOf<Schema>, visit: Visit, wake: Wake): Step
  /** Whether a message that comes while the node waits is held, and answered once the flow waits for a reply again. */
  holdsReplies?: boolean
  /** Checks beyond the schema, on data that matched it. */
  check?(data: Static<Schema>, context: CheckContext): void
  /** The outgoing messages the node sends as written (valid or not), for the channel's limits. */
  messages?(data: Readonly<Record<string, unknown>>): { value: unknown; at: Segment[] }[]
  /** The variables the node writes, read from its data as written, which templates may then read. */
  writes?(data: Readonly<Record<string, unknown>>): string | readonly string[] | undefined
  /** Whether the template at this key of `data` may read workspace secrets (`{{secrets.NAME}}`). */
  secretsIn?(key: string): boolean
  /** Whether a value of `data` is copied as written, so its `{{…}}` is not a variable reference. */
  copiedAsWritten?(key: string, value: unknown): boolean
}

/**
 * What ends a wait: an outside event, or the wait's timer, with the wait as it stood (when it was
 * due, the invalid replies and the reminders so far).
 */
export type Wake = { type: 'event'; name: string; data: Record<string, unknown> } | { type: 'timer'; until: string; retries: number; reminded: number }

/** When a wait's timer is to fire (milliseconds since the epoch), and the reminders sent before it. */
export interface WaitTimer {
  until: number
  reminded?: number
}

/** A node whose `data` matched its type's schema. */
export interface NodeOf<Schema extends TSchema> {
  id: string
  type: string
  position: { x: number; y: number }
  data: Static<Schema>
}

/** One exit of a node; `id` null is the single unnamed exit, which edges leave by without a sourceHandle. */
export interface Exit {
  id: string | null
  /** What the editor shows beside it (a button title, a rule id…); none for an unnamed exit. */
  label?: string
  kind?: 'default' | 'invalid' | 'timeout'
}

/** The handle a question leaves by when its retries are used up. */
export const INVALID_HANDLE = 'invalid'
/** The handle of a valid answer to a non-choice question, and of a condition whose rules all fail. */
export const DEFAULT_HANDLE = 'default'

export const UNNAMED_EXIT: readonly Exit[] = [{ id: null }]
export const NO_EXITS: readonly Exit[] = []

/**
 * How a visit ends: leave by a handle (null is the unnamed exit), wait for a reply, complete, or
 * suspend the turn until the engine has made the call the visit asked for. With no edge at that
 * handle the flow ends as at `end` (its `finish` saying `finishReason`), or the session ends in
 * error for the reason `unhandled` gives. `end`: the flow ends (the session finishes, or a
 * sub-flow returns to its caller); `complete`: the session is over wherever it is (a transfer);
 * `enter`: the flow named runs as a sub-flow, and the node is left by `done` when it ends.
 */
export type Step = { exit: string | null; unhandled?: string; finishReason?: FinishReason } | { enter: SubflowRef } | 'wait' | 'end' | 'complete' | 'suspend'

/** A flow a runFlow node runs: `published` is the version published newest when the session started. */
export interface SubflowRef {
  flowId: string
  version: 'published' | number
}

/** Why a session ends at an exit with no edge, given in its `finish` function (`timeout`). */
export type FinishReason = 'timeout'

/** What a node may do to the turn that visits it; the interpreter keeps the turn pure. */
export interface Visit {
  readonly nodeId: string
  /** The variables templates read now: system ones, then the conversation's. */
  scope(): Scope
  /** Sends messages, interpolated; one the channel would refuse becomes a warning. */
  send(messages: readonly OutgoingMessage[]): void
  /** Sends messages as written, not interpolated (a model's text): a text past the channel's limit is cut, with a warning. */
  sendAsWritten(messages: readonly OutgoingMessage[]): void
  /** Interpolates within this visit, warning once per unknown variable. */
  interpolating<T>(use: (text: (template: string) => string) => T, options?: InterpolationOptions): T
  assign(name: string, value: VariableValue): void
  warn(warning: string): void
  /** Waits at this node for a reply, `retries` invalid replies so far; with a timer, until it fires. */
  wait(retries: number, timer?: WaitTimer): void
  /** Waits at this node for an outside event of `name`, `timeoutSeconds` at most. */
  waitForEvent(name: string, timeoutSeconds: number): void
  /** Takes the oldest event of `name` the session got and kept before any node waited for it. */
  takeEvent(name: string): { data: Record<string, unknown> } | undefined
  /** The node no longer waits (its reply was accepted, or its retries are used up). */
  stopWaiting(): void
  /** Emits a function (transfer, finish) with the turn's next timestamp. */
  call(fn: DistributiveOmit<TurnFunction, 'timestamp'>): void
  /** Emits a kanban action with the turn's next timestamp, and records the session's card. */
  moveCard(action: Omit<KanbanAction, 'timestamp' | 'nodeId'>): void
  /** The session's card as the conversation knows it. */
  readonly card: ConversationState['card']
  newId(): string
  /** The turn's time, in milliseconds since the epoch. */
  now(): number
  /** The turn's calendar date in the workspace's time zone, `YYYY-MM-DD`. */
  today(): string
  /**
   * The id of one of `branches`, each drawn with the chance of its weight over the sum of the
   * weights. The turn records it; a replay of the turn takes the recorded branch.
   */
  choose(branches: readonly { id: string; weight: number }[]): string
  /**
   * The recorded answer of this turn's next call outside, made with `request`; undefined when it has
   * not been made yet, and the visit must then `suspend` the turn.
   */
  callOutside(request: HttpCallRequest): RecordedCall | undefined
  /** The workspace's AI connection of that id as this turn uses it; undefined when there is none. */
  aiConnection(id: string): ConnectionAsUsed | undefined
  /**
   * A model call through the connection, as `callOutside`; once the session made the connection's
   * calls per session, an answer of `limit` and no call.
   */
  callModel(connectionId: string, request: HttpCallRequest): RecordedCall | undefined
  /** Records a model call's tokens with the turn. */
  noteModelCall(call: Omit<ModelCall, 'nodeId'>): void
  /** The conversation's texts, oldest first: the kept history, the trigger's text, then what this turn sent so far. */
  transcript(): readonly TranscriptLine[]
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** A path below a node's `data` (`['prompt', 'text', 'body']`). */
export type Segment = string | number

/** What a flow may refer to in its workspace. */
export interface WorkspaceCatalog {
  sectorIds: ReadonlySet<string>
  /** Each pipeline's stage ids and fields, by pipeline id. */
  pipelines: ReadonlyMap<string, { stageIds: ReadonlySet<string>; fields: readonly Field[] }>
  /** The workspace's variables by name, with their type. */
  variables: ReadonlyMap<string, VariableType>
  /** The workspace's flows by id, for runFlow nodes; a catalog without them knows no flow. */
  flows?: ReadonlyMap<string, CatalogFlow>
  /** The flow being checked, once it exists: a runFlow node must not lead back to it. */
  flowId?: string
  /** The workspace's AI connections by id; a catalog without them knows none. */
  aiConnections?: ReadonlySet<string>
}

/** A flow as a runFlow node's checks see it: its newest version and the flows that version runs. */
export interface CatalogFlow {
  name: string
  publishedVersion: number
  runs: readonly string[]
}

/** What a node's checks see: its workspace and the variables templates may read. */
export interface CheckContext {
  catalog: WorkspaceCatalog
  /** Workspace and system variables, and whatever this flow saves. */
  known: ReadonlySet<string>
  /** Reports a problem at a path below the node's `data`. */
  report(at: readonly Segment[], message: string): void
}
