import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { HttpCallAnswer } from './outside-call.js'
import { AnyKey, Timestamp, Uuid } from './schemas.js'
import { InboundMessage, OutsideEvent, VariableValue, sentText, type TurnOutput } from './turn.js'
import type { SessionEvent } from './session.js'

/**
 * Conversation tests: scripts a flow's builder keeps with the flow, each a conversation to play
 * against a version or the draft and what the bot must do at every turn. They never reach outside:
 * the answers of the flow's calls (an `httpRequest`, an AI step) are written in the test. All tests
 * of a flow live in one stream, so a name is unique exactly and their number bounded under
 * concurrent writes.
 */
export const conversationTestsStream = (flowId: string) => `conversation-tests-${flowId}`

export const CONVERSATION_TEST_LIMITS = {
  perFlow: 50,
  nameLength: 200,
  steps: 100,
  /** Messages a turn is expected to send, checked in order. */
  messages: 20,
  answers: 50,
  textLength: 4096,
} as const

/**
 * How a text is checked: the same text, a text that holds it, or a pattern where `*` is any text
 * and `?` one character (a pattern, not a regular expression: whatever a tenant writes, it checks
 * in time bounded by the two lengths' product).
 */
export const TextMatch = Type.Union([
  Type.Object({ equals: Type.String({ maxLength: CONVERSATION_TEST_LIMITS.textLength }) }),
  Type.Object({ contains: Type.String({ minLength: 1, maxLength: CONVERSATION_TEST_LIMITS.textLength }) }),
  Type.Object({ pattern: Type.String({ minLength: 1, maxLength: CONVERSATION_TEST_LIMITS.textLength }) }),
])
export type TextMatch = Static<typeof TextMatch>

/** A message the bot must send: of this type, its words (a text's body, an interactive's body, a media's caption) matching. */
export const ExpectedMessage = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('media'), Type.Literal('template'), Type.Literal('interactive')])),
  text: Type.Optional(TextMatch),
})
export type ExpectedMessage = Static<typeof ExpectedMessage>

/** What one turn of the bot must do; what it does not name is not checked. */
export const Expectation = Type.Object({
  /** Exactly these messages, in order. */
  messages: Type.Optional(Type.Array(ExpectedMessage, { maxItems: CONVERSATION_TEST_LIMITS.messages })),
  /** The turn transfers the conversation (to this target, where given). */
  transfer: Type.Optional(Type.Object({ targetType: Type.Optional(Type.Union([Type.Literal('sector'), Type.Literal('agent')])), targetId: Type.Optional(Type.String()) })),
  /** The turn finishes the session. */
  finish: Type.Optional(Type.Literal(true)),
  /** Variables hold these values after the turn. */
  variables: Type.Optional(Type.Record(AnyKey, VariableValue)),
  /** The turn walked through this node. */
  visits: Type.Optional(Type.String({ minLength: 1 })),
  /** The node the conversation waits at after the turn; null: it waits nowhere (it ended). */
  waitsAt: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('completed'), Type.Literal('error')])),
  /** The session's card is created or moved so, in order. */
  kanban: Type.Optional(
    Type.Array(Type.Object({ action: Type.Optional(Type.Union([Type.Literal('create'), Type.Literal('move')])), pipelineId: Type.Optional(Type.String()), stageId: Type.Optional(Type.String()) }), {
      maxItems: CONVERSATION_TEST_LIMITS.messages,
    }),
  ),
})
export type Expectation = Static<typeof Expectation>

/** One thing the user or the world does, then what the bot's turn must do. */
export const TestStep = Type.Union([
  Type.Object({ send: InboundMessage, expect: Type.Optional(Expectation) }),
  Type.Object({ event: OutsideEvent, expect: Type.Optional(Expectation) }),
  /** The pending timer of the node the conversation waits at fires (a reply timeout, a reminder, a delay's end). */
  Type.Object({ timer: Type.Literal(true), expect: Type.Optional(Expectation) }),
])
export type TestStep = Static<typeof TestStep>

/** The answer a node's call outside gets in the test; a node's answers are taken in order. */
export const GivenAnswer = Type.Object({ nodeId: Type.String({ minLength: 1 }), answer: HttpCallAnswer })
export type GivenAnswer = Static<typeof GivenAnswer>

export const ConversationTestBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: CONVERSATION_TEST_LIMITS.nameLength }),
  /** The session's initial variables. */
  variables: Type.Optional(Type.Record(AnyKey, VariableValue)),
  answers: Type.Optional(Type.Array(GivenAnswer, { maxItems: CONVERSATION_TEST_LIMITS.answers })),
  /** What the first turn, at the session's start, must do. */
  start: Type.Optional(Expectation),
  steps: Type.Array(TestStep, { maxItems: CONVERSATION_TEST_LIMITS.steps }),
})
export type ConversationTestBody = Static<typeof ConversationTestBody>

const ConversationTestSaved = Type.Object({ flowId: Uuid, workspaceId: Uuid, testId: Uuid, test: ConversationTestBody, savedAt: Timestamp })
const ConversationTestDeleted = Type.Object({ flowId: Uuid, workspaceId: Uuid, testId: Uuid, deletedAt: Timestamp })

export type ConversationTestEvent =
  | { type: 'ConversationTestSaved'; data: Static<typeof ConversationTestSaved> }
  | { type: 'ConversationTestDeleted'; data: Static<typeof ConversationTestDeleted> }

export type ConversationTestCommand =
  /** Creates the test, or replaces the one of that id. */
  | { type: 'SaveConversationTest'; data: { flowId: string; workspaceId: string; testId: string; test: ConversationTestBody; now: string } }
  | { type: 'DeleteConversationTest'; data: { flowId: string; workspaceId: string; testId: string; now: string } }

export interface ConversationTest extends ConversationTestBody {
  id: string
  createdAt: string
  updatedAt: string
}

export interface FlowTests {
  /** Tests by id; read it with {@link testWithId}. */
  byId: Readonly<Record<string, ConversationTest>>
}

export const testWithId = (state: FlowTests, id: string): ConversationTest | undefined => (Object.hasOwn(state.byId, id) ? state.byId[id] : undefined)

const nameKey = (name: string) => name.trim().toLowerCase()

export const conversationTests: Decider<ConversationTestCommand, FlowTests, ConversationTestEvent> = {
  initialState: { byId: {} },
  eventSchemas: { ConversationTestSaved, ConversationTestDeleted },

  decide(command, state) {
    switch (command.type) {
      case 'SaveConversationTest': {
        const { flowId, workspaceId, testId, test, now } = command.data
        const current = testWithId(state, testId)
        if (current && JSON.stringify(bodyOf(current)) === JSON.stringify(test)) return []
        if (!current && Object.keys(state.byId).length >= CONVERSATION_TEST_LIMITS.perFlow) {
          throw new ConflictError(`this flow has ${CONVERSATION_TEST_LIMITS.perFlow} tests, the most it may; delete one before adding another`)
        }
        const taken = Object.values(state.byId).find((other) => other.id !== testId && nameKey(other.name) === nameKey(test.name))
        if (taken) throw new ConflictError(`this flow has a test named "${taken.name}" already`)
        return [{ type: 'ConversationTestSaved', data: { flowId, workspaceId, testId, test, savedAt: now } }]
      }
      case 'DeleteConversationTest': {
        const { flowId, workspaceId, testId, now } = command.data
        if (!testWithId(state, testId)) throw new NotFoundError(`no test ${testId} in this flow`)
        return [{ type: 'ConversationTestDeleted', data: { flowId, workspaceId, testId, deletedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ConversationTestSaved': {
        const { testId, test, savedAt } = event.data
        const createdAt = testWithId(state, testId)?.createdAt ?? savedAt
        return { byId: { ...state.byId, [testId]: { ...test, id: testId, createdAt, updatedAt: savedAt } } }
      }
      case 'ConversationTestDeleted': {
        const { [event.data.testId]: _deleted, ...rest } = state.byId
        return { byId: rest }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}

/** The flow asks its tests to pass before a publish, and these fail against the draft (409). */
export class TestsFailedError extends ConflictError {
  readonly failingTests: readonly { id: string; name: string }[]

  constructor(failingTests: readonly { id: string; name: string }[]) {
    super(`this flow publishes only when its tests pass, and ${failingTests.length} fail against the draft: ${failingTests.map((test) => JSON.stringify(test.name)).join(', ')}`)
    this.failingTests = failingTests
  }
}

/** A test as written, without its id and dates. */
export const bodyOf = ({ id: _id, createdAt: _created, updatedAt: _updated, ...body }: ConversationTest): ConversationTestBody => body

/** Whether `text` matches: `*` stands for any text and `?` for one character, the rest for itself. */
export function matchesPattern(pattern: string, text: string): boolean {
  const glyphs = [...pattern]
  const chars = [...text]
  let p = 0
  let t = 0
  let star = -1
  let resume = 0
  while (t < chars.length) {
    if (p < glyphs.length && (glyphs[p] === '?' || glyphs[p] === chars[t])) {
      p++
      t++
    } else if (p < glyphs.length && glyphs[p] === '*') {
      star = p++
      resume = t
    } else if (star >= 0) {
      p = star + 1
      t = ++resume
    } else {
      return false
    }
  }
  while (p < glyphs.length && glyphs[p] === '*') p++
  return p === glyphs.length
}

/** Whether a text matches what the test says of it. */
export function textMatches(match: TextMatch, text: string): boolean {
  if ('equals' in match) return text === match.equals
  if ('contains' in match) return text.includes(match.contains)
  return matchesPattern(match.pattern, text)
}

/** Where a turn differs from what the test expects: the path checked, what was expected and what came. */
export interface TestProblem {
  at: string
  expected: unknown
  actual: unknown
}

/** What a text check expects, as a result shows it: the text itself, or in words. */
const describeMatch = (match: TextMatch): string =>
  'equals' in match ? match.equals : 'contains' in match ? `a text containing ${JSON.stringify(match.contains)}` : `a text like ${JSON.stringify(match.pattern)}`

/** Every way the turn differs from the expectation; none when it does what the test says. */
export function expectationProblems(expect: Expectation, turn: TurnOutput): TestProblem[] {
  const problems: TestProblem[] = []
  const differ = (at: string, expected: unknown, actual: unknown) => void problems.push({ at, expected, actual })
  if (expect.messages) {
    const sent = turn.messages
    if (sent.length !== expect.messages.length) differ('messages', `${expect.messages.length} message(s)`, sent.map((message) => sentText(message) ?? `(${message.type})`))
    expect.messages.forEach((expected, i) => {
      const message = sent[i]
      if (!message) return
      if (expected.type !== undefined && message.type !== expected.type) differ(`messages[${i}].type`, expected.type, message.type)
      const words = sentText(message) ?? ''
      if (expected.text && !textMatches(expected.text, words)) differ(`messages[${i}].text`, describeMatch(expected.text), words)
    })
  }
  const transfer = turn.functions.find((fn) => fn.type === 'transfer')
  if (expect.transfer) {
    if (!transfer) differ('transfer', expect.transfer, null)
    else {
      if (expect.transfer.targetType !== undefined && transfer.targetType !== expect.transfer.targetType) differ('transfer.targetType', expect.transfer.targetType, transfer.targetType)
      if (expect.transfer.targetId !== undefined && transfer.targetId !== expect.transfer.targetId) differ('transfer.targetId', expect.transfer.targetId, transfer.targetId)
    }
  }
  if (expect.finish && !turn.functions.some((fn) => fn.type === 'finish')) differ('finish', true, false)
  for (const [name, value] of Object.entries(expect.variables ?? {})) {
    const actual = Object.hasOwn(turn.state.variables, name) ? turn.state.variables[name] : undefined
    if (JSON.stringify(actual) !== JSON.stringify(value)) differ(`variables.${name}`, value, actual ?? null)
  }
  if (expect.visits !== undefined && !turn.visited.includes(expect.visits)) differ('visits', expect.visits, turn.visited)
  if (expect.waitsAt !== undefined && (turn.state.waitingAt?.nodeId ?? null) !== expect.waitsAt) differ('waitsAt', expect.waitsAt, turn.state.waitingAt?.nodeId ?? null)
  if (expect.status !== undefined && turn.status !== expect.status) differ('status', expect.status, turn.status)
  if (expect.kanban) {
    if (turn.kanban.length !== expect.kanban.length) differ('kanban', `${expect.kanban.length} card action(s)`, turn.kanban.map(({ action, pipelineId, stageId }) => ({ action, pipelineId, stageId })))
    expect.kanban.forEach((expected, i) => {
      const action = turn.kanban[i]
      if (!action) return
      for (const key of ['action', 'pipelineId', 'stageId'] as const) {
        if (expected[key] !== undefined && action[key] !== expected[key]) differ(`kanban[${i}].${key}`, expected[key], action[key])
      }
    })
  }
  return problems
}

/** What a recorded turn did, as a test expects it: its messages word for word, what it called, set and where it stopped. */
export function expectationOf(turn: TurnOutput): Expectation {
  const transfer = turn.functions.find((fn) => fn.type === 'transfer')
  return {
    messages: turn.messages.slice(0, CONVERSATION_TEST_LIMITS.messages).map((message) => {
      const words = sentText(message)
      return { type: message.type, ...(words !== undefined && { text: { equals: words } }) }
    }),
    ...(transfer && { transfer: { targetType: transfer.targetType, targetId: transfer.targetId } }),
    ...(turn.functions.some((fn) => fn.type === 'finish') && { finish: true as const }),
    ...(Object.keys(turn.variables).length > 0 && { variables: turn.variables }),
    waitsAt: turn.state.waitingAt?.nodeId ?? null,
    status: turn.status,
  }
}

/**
 * A session's conversation as a test, to edit and keep: its initial variables, what the user and
 * the world did as steps, each turn the bot made as what the step expects, and the answers its calls
 * got. Steps past the limit, and what came after a turn that failed, are left out.
 */
export function testOfSession(name: string, events: readonly SessionEvent[]): ConversationTestBody {
  const test: ConversationTestBody = { name, steps: [] }
  const steps = new Map<string, TestStep | 'start'>()
  const answers: GivenAnswer[] = []
  for (const event of events) {
    switch (event.type) {
      case 'SessionStarted':
        if (Object.keys(event.data.variables).length > 0) test.variables = event.data.variables
        steps.set(event.data.messageId, 'start')
        break
      case 'MessageReceived':
        steps.set(event.data.messageId, { send: event.data.message })
        break
      case 'OutsideEventReceived':
        steps.set(event.data.messageId, { event: event.data.event })
        break
      case 'TimerFired':
        steps.set(event.data.messageId, { timer: true })
        break
      case 'OutsideCallAnswered':
        if (answers.length < CONVERSATION_TEST_LIMITS.answers) answers.push({ nodeId: event.data.nodeId, answer: event.data.answer })
        break
      case 'TurnCompleted': {
        const step = steps.get(event.data.messageId)
        const expect = expectationOf(event.data.output)
        if (step === 'start') test.start = expect
        else if (step && test.steps.length < CONVERSATION_TEST_LIMITS.steps) test.steps.push({ ...step, expect })
        break
      }
      default:
        break
    }
    if (event.type === 'TurnFailed') break
  }
  if (answers.length > 0) test.answers = answers
  return test
}
