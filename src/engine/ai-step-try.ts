import { randomUUID } from 'node:crypto'
import type { ConnectionAsUsed } from '../domain/ai-connection.js'
import * as ai from '../domain/nodes/ai.js'
import { ERROR_HANDLE } from '../domain/nodes/http-request.js'
import type { TypedNode } from '../domain/nodes/index.js'
import type { RecordedCall } from '../domain/outside-call.js'
import { sentText, type TurnContext, type TurnOutput, type VariableValue } from '../domain/turn.js'
import type { Logger } from '../logger.js'
import { initialConversation, runTurn, runTurnOrCall, type RunnableFlow } from './interpreter.js'
import { makeCall, type OutsideCallSettings } from './outside-calls.js'

/** What an AI step did with a sample message, as "try it" shows it. */
export interface AiStepTrial {
  /** The exit the step left by. */
  exit: string
  /** The texts it sent. */
  messages: string[]
  /** The variables it filled. */
  variables: Record<string, VariableValue>
  warnings: string[]
  /** The call it made, as recorded (the key as its placeholder); none when it made none. */
  call?: RecordedCall
  usage: { promptTokens: number; completionTokens: number }
}

export interface AiStepSample {
  workspaceId: string
  connectionId: string
  connection: ConnectionAsUsed
  step: ai.Data
  /** What the user says to the step. */
  message: string
  variables: Record<string, VariableValue>
  timeZone: string
}

const STEP_ID = 'step'

/**
 * The step in a flow of its own: a question takes the sample message, the step reads it, and an
 * end node stands at each of its exits, so the node the turn ends at names the exit taken.
 */
function trialFlow(step: ai.Data): { flow: RunnableFlow; exitAt: Map<string, string> } {
  const exits = ai.exits(step)
  const exitAt = new Map(exits.map((exit, i) => [`exit-${i}`, exit.id ?? '']))
  const at = { x: 0, y: 0 }
  const nodes: TypedNode[] = [
    { id: 'start', type: 'start', position: at, data: {} },
    { id: 'ask', type: 'question', position: at, data: { prompt: { type: 'text', text: { body: 'sample' } }, input: { kind: 'text' } } },
    { id: STEP_ID, type: 'ai', position: at, data: step },
    ...[...exitAt.keys()].map((id): TypedNode => ({ id, type: 'end', position: at, data: {} })),
  ]
  const edges = [
    { id: 'e-start', source: 'start', target: 'ask' },
    { id: 'e-ask', source: 'ask', target: STEP_ID, sourceHandle: 'default' },
    ...[...exitAt].map(([id, handle]) => ({ id: `e-${id}`, source: STEP_ID, target: id, sourceHandle: handle })),
  ]
  return { flow: { schemaVersion: 1, nodes, edges }, exitAt }
}

/**
 * Runs an AI step once on a sample message through the interpreter, as a session's turn runs it,
 * making its call through the outside-call agent; nothing is recorded.
 */
export async function tryAiStep(settings: Pick<OutsideCallSettings, 'agent' | 'revealSecrets'>, sample: AiStepSample, logger: Pick<Logger, 'error'>): Promise<AiStepTrial> {
  const { flow, exitAt } = trialFlow(sample.step)
  const context = (calls: RecordedCall[]): TurnContext => ({
    nowMicros: Date.now() * 1000,
    timeZone: sample.timeZone,
    newId: randomUUID,
    random: Math.random,
    system: { sessionId: 'try', externalId: '', flowId: 'try', workspaceId: sample.workspaceId, lastMessage: sample.message },
    calls,
    aiConnections: { [sample.connectionId]: sample.connection },
    transcript: [],
  })
  const asked = runTurn(flow, initialConversation(sample.variables), { type: 'start' }, context([]))
  const reply = { type: 'message' as const, message: { type: 'text' as const, text: { body: sample.message } } }
  const calls: RecordedCall[] = []
  let output: TurnOutput | undefined
  while (!output) {
    const ran = runTurnOrCall(flow, asked.state, reply, context(calls))
    if (ran.status !== 'calling') output = ran
    else calls.push(await makeCall(settings, { workspaceId: sample.workspaceId, index: ran.index, nodeId: ran.nodeId, request: ran.request }, logger))
  }
  const modelCalls = output.modelCalls ?? []
  return {
    exit: exitAt.get(output.visited.at(-1) ?? '') ?? ERROR_HANDLE,
    messages: output.messages.flatMap((message) => (message.nodeId === STEP_ID ? [sentText(message) ?? ''] : [])),
    variables: output.variables,
    warnings: output.warnings,
    ...(calls[0] && { call: calls[0] }),
    usage: {
      promptTokens: modelCalls.reduce((sum, call) => sum + call.promptTokens, 0),
      completionTokens: modelCalls.reduce((sum, call) => sum + call.completionTokens, 0),
    },
  }
}
