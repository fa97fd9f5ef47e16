import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Value } from '@sinclair/typebox/value'
import { aiConnectionOf } from '../../commands/ai-connections.js'
import { connectionAsUsed } from '../../domain/ai-connection.js'
import { schema as AiStepData } from '../../domain/nodes/ai.js'
import { HttpCallAnswer, HttpCallRequest } from '../../domain/outside-call.js'
import { LIMITS } from '../../domain/message-limits.js'
import { VariableValue } from '../../domain/turn.js'
import { tryAiStep } from '../../engine/ai-step-try.js'
import { BadRequestError, NotFoundError } from '../../errors.js'
import { workspaceTimeZone } from '../../projections/date-range.js'
import type { AppDeps } from '../app.js'
import { outsideCallSettings } from '../context.js'
import type { Tag } from '../openapi.js'
import { errorResponses } from '../schemas.js'

export const openApiTag: Tag = { name: 'ai-steps', description: "A flow's AI steps, tried once on a sample message from the editor" }

const StepTrial = Type.Object({
  exit: Type.String({ description: 'the exit the step left by: a label, other, success, missing or error' }),
  messages: Type.Array(Type.String(), { description: 'the texts a reply step sent' }),
  variables: Type.Record(Type.String(), VariableValue, { description: 'the variables the step filled' }),
  warnings: Type.Array(Type.String(), { description: 'why the step left by error or missing, and what it dropped' }),
  request: Type.Optional(Type.Composite([HttpCallRequest], { description: 'the call as sent, the key written `{{secrets.NAME}}`; absent when no call was made' })),
  answer: Type.Optional(HttpCallAnswer),
  durationMs: Type.Integer({ minimum: 0 }),
  usage: Type.Object({ promptTokens: Type.Integer({ minimum: 0 }), completionTokens: Type.Integer({ minimum: 0 }) }),
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const calls = outsideCallSettings(app, deps)

    app.post(
      '/ai-steps/try',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'tryAiStep',
          summary: 'Run an AI step once on a sample message',
          description:
            "Runs the step as a session's turn would with `message` as the user's last message and the sample `variables`: the prompt is built, the connection's endpoint called through the same agent, limits and timeout, and the answer read and checked. Answers the exit taken, what was sent and filled, the call and the tokens it took; nothing is recorded. 400 when the data is not an AI step's or its connection is not in the workspace.",
          body: Type.Object(
            {
              step: Type.Unsafe<Record<string, unknown>>({ ...AiStepData, description: "the AI step's data" }),
              message: Type.String({ minLength: 1, maxLength: LIMITS.textBody, description: 'what the user says' }),
              variables: Type.Optional(Type.Record(Type.String(), VariableValue, { description: 'sample values of the variables the instructions read' })),
            },
            {
              examples: [{
                step: { connectionId: '0b5e8f0e-8a0d-4a51-9a43-3d1f0e6f2a10', mode: 'classify', instructions: 'You route customer messages.', labels: [{ id: 'cancel', description: 'wants to cancel' }, { id: 'track', description: 'asks where an order is' }] },
                message: 'I want to cancel my plan',
              }],
            },
          ),
          response: { 200: StepTrial, ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const { step, message, variables = {} } = request.body
        if (!Value.Check(AiStepData, step)) throw new BadRequestError('body/step is not the data of an AI step')
        const { workspaceId } = request.principal
        const connection = await aiConnectionOf(deps, workspaceId, step.connectionId).catch((error: unknown) => {
          throw error instanceof NotFoundError ? new BadRequestError(`body/step/connectionId: no AI connection ${step.connectionId} in this workspace`) : error
        })
        const trial = await tryAiStep(calls, {
          workspaceId,
          connectionId: step.connectionId,
          connection: connectionAsUsed(connection),
          step,
          message,
          variables,
          timeZone: await workspaceTimeZone(deps.db, workspaceId),
        }, deps.logger)
        const { call, ...outcome } = trial
        return { ...outcome, ...(call && { request: call.request, answer: call.answer }), durationMs: call?.durationMs ?? 0 }
      },
    )
  }
