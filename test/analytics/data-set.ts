import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { cardStream } from '../../src/domain/card.js'
import { sessionStream } from '../../src/domain/session.js'
import type { RunnableFlow } from '../../src/engine/interpreter.js'
import type { Position } from '../../src/eventstore/port.js'
import type { Bootstrapped } from '../../src/commands/tenancy.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import type { Backend } from '../helpers/storage.js'
import type { ModelCall, TurnOutput } from '../../src/domain/turn.js'
import { START, buttonReply, buttons, chain, context, edge, end, message, question, text, transfer, turn } from '../helpers/engine.js'

/**
 * The known data set of docs/analytics.md's examples, in workspace "Main" (UTC), March 2026:
 * flow "Support" (v1) asks "Sales or support?" and transfers sales to sector "Sales team".
 *
 * | session | started (UTC) | replies                          | ends                          |
 * |---------|---------------|----------------------------------|-------------------------------|
 * | A       | 03-08 10:00   | sales at 10:02                   | completed (transfer), 120 s   |
 * | B       | 03-08 11:00   | support at 11:05                 | completed (end), 300 s        |
 * | C       | 03-09 09:00   | none                             | timeout at 09:30, 1800 s      |
 * | D       | 03-09 15:00   | "hello" (invalid) 15:01, sales 15:04 | completed (transfer), 240 s |
 * | E       | 03-10 08:00   | none                             | running                       |
 *
 * Pipeline "Deals" (New, Won, Lost): card 1 created in New 03-08 12:00, moved to Won 03-09 12:00;
 * card 2 created in New 03-09 08:00, moved to Lost 03-09 14:00, deleted 03-10 10:00; card 3
 * created in New 03-08 11:05, still there. Turns come from the real interpreter; the session and
 * card events are appended with these times, the rest (workspace, flow, sector, pipeline) made
 * through the API.
 *
 * Three reply turns record model calls, as AI steps would (the read models take them from the
 * turn, whatever its nodes): A's "small" 120 + 30 tokens (prompt + completion); B's "small" twice,
 * 100 + 20 and 80 + 25, and "large" 400 + 90; D's second "large" 300 + 60 (`MODEL_CALLS`).
 */
export const NOW = new Date('2026-03-10T12:00:00.000Z')

export interface DataSet {
  test: TestApp
  flowId: string
  sectorId: string
  pipelineId: string
  stages: { New: string; Won: string; Lost: string }
  /** Where the last appended event of each stream kind is, to wait for the read models. */
  last: Map<string, Position>
}

const supportFlow = (sectorId: string): RunnableFlow => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    message('greet', text('Hello!')),
    question('ask', { prompt: buttons('Sales or support?', ['sales', 'Sales'], ['support', 'Support']), input: { kind: 'choice' }, maxRetries: 1 }),
    transfer('to-sales', 'sector', sectorId),
    message('help', text('Here is our help page.')),
    end('end'),
  ],
  edges: [...chain('start', 'greet', 'ask'), edge('ask', 'to-sales', 'sales'), edge('ask', 'help', 'support'), edge('ask', 'end', 'invalid'), ...chain('help', 'end')],
})

const at = (time: string) => new Date(`2026-03-${time}:00.000Z`)

const modelCall = (model: string, promptTokens: number, completionTokens: number): ModelCall => ({
  nodeId: 'ask',
  connectionId: '01a20247-0000-7000-8000-00000000a1a1',
  model,
  promptTokens,
  completionTokens,
  durationMs: 800,
})

/** The model calls of the data set's reply turns, by the session's letter (see the table above). */
export const MODEL_CALLS = {
  A: [modelCall('small', 120, 30)],
  B: [modelCall('small', 100, 20), modelCall('small', 80, 25), modelCall('large', 400, 90)],
  D: [modelCall('large', 300, 60)],
}

export async function buildDataSet(t: Test, backend: Backend): Promise<DataSet> {
  const test = await openTestApp(t, backend, { now: () => NOW })
  return { test, ...(await addDataSet(test, test.admin)) }
}

/** The same data set in the workspace of `owner` (another organization's, say), under ids of its own. */
export async function addDataSet(test: TestApp, owner: Bootstrapped): Promise<Omit<DataSet, 'test'>> {
  const headers = { 'x-api-key': owner.apiKey }
  const post = async (url: string, payload: unknown) => {
    const response = await test.app.inject({ method: 'POST', url, headers, payload: payload as object })
    if (response.statusCode !== 201) throw new Error(`POST ${url}: ${response.statusCode} ${response.body}`)
    // A sector's creation answers its address only.
    return response.body ? response.json() : { id: String(response.headers.location).split('/').at(-1) }
  }
  const sector = await post('/v1/sectors', { name: 'Sales team' })
  const pipeline = await post('/v1/kanban/pipelines', { name: 'Deals', stages: [{ name: 'New' }, { name: 'Won' }, { name: 'Lost' }] })
  const stages = Object.fromEntries(pipeline.stages.map((stage: { id: string; name: string }) => [stage.name, stage.id])) as DataSet['stages']
  const definition = supportFlow(sector.id)
  const flow = await post('/v1/flows', { name: 'Support', definition })
  const { organizationId, workspaceId } = owner
  const last: DataSet['last'] = new Map()

  const append = async (stream: string, type: string, data: object) => {
    const { position } = await test.store.append(stream, [{ id: randomUUID(), type, data, metadata: { actor: 'test' } }], { expectedRevision: 'any' })
    last.set(`${stream.split('-')[0]}-`, position)
  }

  const session = async (start: string, replies: { at: string; trigger: Parameters<typeof turn>[2]; modelCalls?: ModelCall[] }[], ending?: { expiredAt: string }) => {
    const sessionId = randomUUID()
    const stream = sessionStream(sessionId)
    const startedAt = at(start)
    await append(stream, 'SessionStarted', {
      sessionId,
      workspaceId,
      organizationId,
      flowId: flow.id,
      flowVersion: 1,
      variables: {},
      externalId: null,
      apiKeyId: owner.apiKeyId,
      callbackUrl: null,
      ttlSeconds: 1800,
      messageId: randomUUID(),
      startedAt: startedAt.toISOString(),
      expiresAt: new Date(startedAt.getTime() + 1_800_000).toISOString(),
    })
    const completeTurn = async (messageId: string, output: TurnOutput, completedAt: Date) =>
      append(stream, 'TurnCompleted', { sessionId, messageId, output, completedAt: completedAt.toISOString() })
    let output = turn(definition, { waitingAt: null, variables: {}, lastTimestampMicros: 0, card: null }, START, context({ nowMicros: startedAt.getTime() * 1000 }))
    await completeTurn(randomUUID(), output, startedAt)
    for (const reply of replies) {
      const receivedAt = at(reply.at)
      const messageId = randomUUID()
      if (reply.trigger.type !== 'message') throw new Error('a reply is a message')
      await append(stream, 'MessageReceived', {
        sessionId,
        messageId,
        message: reply.trigger.message,
        idempotencyKey: null,
        receivedAt: receivedAt.toISOString(),
        expiresAt: new Date(receivedAt.getTime() + 1_800_000).toISOString(),
      })
      output = turn(definition, output.state, reply.trigger, context({ nowMicros: receivedAt.getTime() * 1000 }))
      if (reply.modelCalls) output = { ...output, modelCalls: reply.modelCalls }
      await completeTurn(messageId, output, receivedAt)
    }
    if (ending) await append(stream, 'SessionExpired', { sessionId, expiredAt: at(ending.expiredAt).toISOString() })
  }

  await session('08T10:00', [{ at: '08T10:02', trigger: buttonReply('sales', 'Sales'), modelCalls: MODEL_CALLS.A }])
  await session('08T11:00', [{ at: '08T11:05', trigger: buttonReply('support', 'Support'), modelCalls: MODEL_CALLS.B }])
  await session('09T09:00', [], { expiredAt: '09T09:30' })
  await session('09T15:00', [
    { at: '09T15:01', trigger: { type: 'message', message: { type: 'text', text: { body: 'hello' } } } },
    { at: '09T15:04', trigger: buttonReply('sales', 'Sales'), modelCalls: MODEL_CALLS.D },
  ])
  await session('10T08:00', [])

  const card = async (stage: keyof DataSet['stages'], createdAt: string, then: ({ moveTo: keyof DataSet['stages']; at: string } | { deleteAt: string })[] = []) => {
    const cardId = randomUUID()
    const common = { cardId, pipelineId: pipeline.id, sessionId: null, tags: [] }
    await append(cardStream(cardId), 'CardCreated', { ...common, workspaceId, stageId: stages[stage], values: {}, createdAt: at(createdAt).toISOString() })
    let current = stages[stage]
    for (const step of then) {
      if ('moveTo' in step) {
        await append(cardStream(cardId), 'CardStageChanged', { ...common, stageId: stages[step.moveTo], previousStageId: current, movedAt: at(step.at).toISOString() })
        current = stages[step.moveTo]
      } else await append(cardStream(cardId), 'CardDeleted', { ...common, stageId: current, deletedAt: at(step.deleteAt).toISOString() })
    }
  }
  await card('New', '08T12:00', [{ moveTo: 'Won', at: '09T12:00' }])
  await card('New', '09T08:00', [{ moveTo: 'Lost', at: '09T14:00' }, { deleteAt: '10T10:00' }])
  await card('New', '08T11:05')

  await waitForAll(test, last)
  return { flowId: flow.id, sectorId: sector.id, pipelineId: pipeline.id, stages, last }
}

/** Waits until every read model has applied everything appended so far. */
export async function waitForAll(test: TestApp, last: DataSet['last']): Promise<void> {
  for (const [prefix, position] of last) {
    if (!(await test.readModels.waitFor(`${prefix}x`, position, { timeoutMs: 20_000 }))) throw new Error(`the read models did not reach the last ${prefix} event`)
  }
}
