import { setImmediate } from 'node:timers/promises'
import { v5 as uuidV5 } from 'uuid'
import type { ConnectionAsUsed } from '../domain/ai-connection.js'
import { expectationProblems, type ConversationTestBody, type Expectation, type TestProblem, type TestStep } from '../domain/conversation-test.js'
import type { RecordedCall } from '../domain/outside-call.js'
import { extendedTranscript, sentText, triggerText, type ConversationState, type TranscriptLine, type Trigger, type TurnOutput } from '../domain/turn.js'
import { aiConnectionsCalled, initialConversation, runTurnOrCall, type RunnableFlow } from './interpreter.js'
import { connectionsAsUsed } from '../commands/ai-connections.js'
import { flowOf, testsOf, type TestsContext } from '../commands/conversation-tests.js'
import type { Scope } from '../commands/sectors.js'
import { BadRequestError } from '../errors.js'
import { workspaceTimeZone } from '../projections/date-range.js'
import type { FlowVersions } from './flow-versions.js'

/** What one turn of a test did, and how it differs from what the test expects. */
export interface StepResult {
  /** 0: the start; then 1 for the test's first step, and so on. */
  step: number
  passed: boolean
  problems: TestProblem[]
  /** What the bot did, for a person reading the result. */
  said: string[]
  waitsAt: string | null
  status: TurnOutput['status']
}

/** Why a test stopped before its last step, as a value: the conversation had ended, no timer was pending to fire, or a call the test gives no answer for. */
export type TestStop = { step: number } & ({ reason: 'ended' } | { reason: 'no_pending_timer'; nodeId: string | null } | { reason: 'unanswered_call'; nodeId: string })

export interface TestResult {
  passed: boolean
  steps: StepResult[]
  /** Why the test stopped before its last step, in words. */
  stopped?: string
  /** The same, as a value. */
  stop?: TestStop
}

export interface TestInputs {
  /** The workspace's time zone, for date questions. */
  timeZone: string
  /** The AI connections the flow's AI steps use, as a session would find them. */
  aiConnections?: Readonly<Record<string, ConnectionAsUsed>>
}

/** The clock every test runs on: the same answers whenever and wherever it runs. */
const TEST_START_MS = Date.UTC(2026, 0, 5, 9)
const TEST_NAMESPACE = '6f1d3c52-5a7e-4f4a-9d56-4c1e7f8b2a90'

/**
 * Plays a conversation test against a flow with the interpreter the engine runs, turn by turn,
 * the outside answered from the test's `answers` and time from a fixed clock (a timer fires when
 * it is due). Pure: nothing is recorded, sent or called.
 */
export function runConversationTest(flow: RunnableFlow, test: ConversationTestBody, inputs: TestInputs): TestResult {
  const answers = new Map<string, RecordedCall['answer'][]>()
  for (const { nodeId, answer } of test.answers ?? []) answers.set(nodeId, [...(answers.get(nodeId) ?? []), answer])
  let state: ConversationState = initialConversation(test.variables ?? {})
  let nowMs = TEST_START_MS
  let transcript: TranscriptLine[] = []
  const steps: StepResult[] = []
  const triggers: { trigger: Trigger | 'timer'; expect?: Expectation }[] = [{ trigger: { type: 'start' }, expect: test.start }, ...test.steps.map(stepTrigger)]
  for (const [index, { trigger: given, expect }] of triggers.entries()) {
    if (index > 0 && !state.waitingAt) return stoppedAt(steps, { step: index, reason: 'ended' })
    const trigger = given === 'timer' ? timerOf(state) : given
    if (trigger === null) return stoppedAt(steps, { step: index, reason: 'no_pending_timer', nodeId: state.waitingAt?.nodeId ?? null })
    if (trigger.type === 'timer') nowMs = Math.max(nowMs, Date.parse(trigger.until))
    const played = playUntilAnswered(flow, state, trigger, { index, nowMs, inputs, answers, transcript })
    if ('unanswered' in played) return stoppedAt(steps, { step: index, reason: 'unanswered_call', nodeId: played.unanswered })
    const problems = expect ? expectationProblems(expect, played) : []
    steps.push({
      step: index,
      passed: problems.length === 0,
      problems,
      said: played.messages.map((message) => sentText(message) ?? `(${message.type})`),
      waitsAt: played.state.waitingAt?.nodeId ?? null,
      status: played.status,
    })
    state = played.state
    transcript = extendedTranscript(transcript, trigger, played.messages)
    nowMs += 1000
  }
  return { passed: steps.every((step) => step.passed), steps }
}

const stoppedAt = (steps: StepResult[], stop: TestStop): TestResult => ({ passed: false, steps, stopped: stopText(stop), stop })

function stopText(stop: TestStop): string {
  switch (stop.reason) {
    case 'ended':
      return `step ${stop.step}: the conversation has ended; it takes no more steps`
    case 'no_pending_timer':
      return `step ${stop.step}: no timer is pending${stop.nodeId ? ` at ${stop.nodeId}` : ''}`
    default:
      return `step ${stop.step}: node ${stop.nodeId} makes a call the test gives no answer for (answers: [{ nodeId: "${stop.nodeId}", answer: … }])`
  }
}

const stepTrigger = (step: TestStep): { trigger: Trigger | 'timer'; expect?: Expectation } => {
  if ('send' in step) return { trigger: { type: 'message', message: step.send }, expect: step.expect }
  if ('event' in step) return { trigger: { type: 'event', event: step.event }, expect: step.expect }
  return { trigger: 'timer', expect: step.expect }
}

/** The trigger of the waiting node's timer; null when none is pending. */
const timerOf = (state: ConversationState): Trigger | null => {
  const waiting = state.waitingAt
  if (!waiting?.until) return null
  return { type: 'timer', nodeId: waiting.nodeId, until: waiting.until }
}

/** One turn, its calls outside answered from the test; the node of a call the test gives no answer for. */
function playUntilAnswered(
  flow: RunnableFlow,
  state: ConversationState,
  trigger: Trigger,
  turn: { index: number; nowMs: number; inputs: TestInputs; answers: Map<string, RecordedCall['answer'][]>; transcript: readonly TranscriptLine[] },
): TurnOutput | { unanswered: string } {
  const calls: RecordedCall[] = []
  for (;;) {
    let ids = 0
    let draws = 0
    const output = runTurnOrCall(flow, state, trigger, {
      nowMicros: turn.nowMs * 1000,
      timeZone: turn.inputs.timeZone,
      newId: () => uuidV5(`${turn.index}/${ids++}`, TEST_NAMESPACE),
      // Split nodes draw evenly spread, the same draws in every run.
      random: () => ((turn.index * 7919 + draws++ * 104729) % 1000) / 1000,
      system: { sessionId: uuidV5('session', TEST_NAMESPACE), externalId: '', flowId: 'test', workspaceId: '', lastMessage: triggerText(trigger) },
      calls,
      transcript: turn.transcript,
      ...(turn.inputs.aiConnections && { aiConnections: turn.inputs.aiConnections }),
    })
    if (output.status !== 'calling') return output
    const answer = turn.answers.get(output.nodeId)?.shift()
    if (!answer) return { unanswered: output.nodeId }
    calls.push({ index: output.index, nodeId: output.nodeId, request: output.request, answer, durationMs: 0 })
  }
}

/** A run of some of a flow's tests against one of its versions or its draft. */
export interface TestRun {
  flowId: string
  /** The version run; null: the draft as it is now. */
  version: number | null
  /** The draft's version run (its `draftVersion`); null when a published version ran. */
  draftVersion: number | null
  passed: boolean
  tests: (TestResult & { id: string; name: string })[]
}

/**
 * Runs the flow's tests (those of `testIds`, else all) against a published version or, without
 * one, the draft: each a conversation played by the engine's interpreter, nothing recorded, sent or
 * called.
 */
export async function runConversationTests(
  ctx: TestsContext & { flows: FlowVersions },
  scope: Scope,
  flowId: string,
  choice: { version?: number; testIds?: readonly string[] },
): Promise<TestRun> {
  const flow = await flowOf(ctx, scope, flowId)
  const { byId } = await testsOf(ctx.store, flowId)
  const unknown = (choice.testIds ?? []).filter((id) => !Object.hasOwn(byId, id))
  if (unknown.length > 0) throw new BadRequestError(`testIds: no test ${unknown.join(', ')} in this flow`)
  if (choice.version !== undefined && (choice.version < 1 || choice.version > flow.publishedVersion)) {
    throw new BadRequestError(`version: flow ${flowId} has published versions 1 to ${flow.publishedVersion}`)
  }
  const runnable = await ctx.flows.ofSession({
    flowId,
    flowVersion: choice.version ?? 0,
    previewDefinition: choice.version === undefined ? flow.definition : null,
    workspaceId: scope.workspaceId,
    startedAt: ctx.now().toISOString(),
  })
  if (typeof runnable === 'string') throw new BadRequestError(`the flow cannot run: ${runnable}`)
  const called = aiConnectionsCalled(runnable)
  const inputs = { timeZone: await workspaceTimeZone(ctx.db, scope.workspaceId), ...(called.length > 0 && { aiConnections: await connectionsAsUsed(ctx.store, scope.workspaceId, called) }) }
  const chosen = choice.testIds ? choice.testIds.map((id) => byId[id]!) : Object.values(byId).sort((a, b) => a.name.localeCompare(b.name, 'en'))
  const tests: TestRun['tests'] = []
  for (const test of chosen) {
    // A run is CPU alone; between tests the process answers everyone else's requests.
    if (tests.length > 0) await setImmediate()
    tests.push({ id: test.id, name: test.name, ...runConversationTest(runnable, test, inputs) })
  }
  const draftVersion = choice.version === undefined ? flow.draftVersion : null
  return { flowId, version: choice.version ?? null, draftVersion, passed: tests.every((test) => test.passed), tests }
}
